// @ts-check
// The page's only way to the REST API: same-origin fetch with the bearer token from session storage,
// problem+json turned into an ApiError, and one token prompt shared by every call that got a 401.
// The answers' types come from the OpenAPI document (openapi/api-types.d.ts, generated).

/** @typedef {import('../../../../openapi/api-types').components['schemas']['Problem']} Problem */

const TOKEN_KEY = 'powerplan.token';

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when the service did not answer
   * @param {Partial<Problem>} problem
   */
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code;
    this.title = problem.title || `HTTP ${status}`;
  }
}

export const getToken = () => sessionStorage.getItem(TOKEN_KEY) ?? '';
/** @param {string} token */
export const setToken = (token) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

/**
 * Asks for a token; set by the page. Resolves true when a new token was entered.
 * @type {(message: string | undefined) => Promise<boolean>}
 */
let askToken = async () => false;
/** @param {typeof askToken} fn */
export const onTokenNeeded = (fn) => {
  askToken = fn;
};

// Concurrent 401s share one prompt.
/** @type {Promise<boolean> | undefined} */
let pendingPrompt;
/** @param {string | undefined} message */
const promptOnce = (message) => {
  pendingPrompt ??= askToken(message).finally(() => {
    pendingPrompt = undefined;
  });
  return pendingPrompt;
};

/**
 * The problem document of a failed answer, or one made from its status and first line.
 * @param {Response} res
 * @returns {Promise<Partial<Problem>>}
 */
const problemOf = async (res) => {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body && typeof body === 'object') return body;
  } catch {
    // Not JSON: a proxy's error page, say. Show its first line rather than nothing.
  }
  return { title: `HTTP ${res.status} ${res.statusText}`, detail: text.trim().split('\n')[0]?.slice(0, 300) };
};

/**
 * Calls the API; resolves with the JSON body, rejects with an ApiError. On 401 it asks for a token
 * and repeats the call once per token entered, until the prompt is dismissed. The caller names the
 * answer's type (a JSDoc cast to a schema of api-types).
 * @param {'GET' | 'PUT' | 'POST' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<unknown>}
 */
export const api = async (method, path, body) => {
  for (;;) {
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    const token = getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw new ApiError(0, { title: 'Network error', detail: `The service did not answer (${reason}).` });
    }
    if (res.ok) return res.status === 204 ? null : res.json();
    const problem = await problemOf(res);
    if (res.status === 401 && (await promptOnce(problem.detail))) continue;
    throw new ApiError(res.status, problem);
  }
};
