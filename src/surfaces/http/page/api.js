// The page's only way to the REST API: same-origin fetch with the bearer token from session storage,
// problem+json turned into an ApiError, and one token prompt shared by every call that got a 401.

const TOKEN_KEY = 'powerplan.token';

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code;
    this.title = problem.title || `HTTP ${status}`;
  }
}

export const getToken = () => sessionStorage.getItem(TOKEN_KEY) ?? '';
export const setToken = (token) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

/** Asks for a token; set by the page. Resolves true when a new token was entered. */
let askToken = async () => false;
export const onTokenNeeded = (fn) => {
  askToken = fn;
};

// Concurrent 401s share one prompt.
let pendingPrompt;
const promptOnce = (message) => {
  pendingPrompt ??= askToken(message).finally(() => {
    pendingPrompt = undefined;
  });
  return pendingPrompt;
};

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
 * and repeats the call once per token entered, until the prompt is dismissed.
 */
export const api = async (method, path, body) => {
  for (;;) {
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
      throw new ApiError(0, { title: 'Network error', detail: `The service did not answer (${e.message}).` });
    }
    if (res.ok) return res.status === 204 ? null : res.json();
    const problem = await problemOf(res);
    if (res.status === 401 && (await promptOnce(problem.detail))) continue;
    throw new ApiError(res.status, problem);
  }
};
