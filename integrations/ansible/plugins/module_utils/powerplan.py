# The powerplan service's REST API for the collection's modules: one request function, the shared
# options, the service's problem+json turned into the task's failure (msg = the detail), and the
# run every module shares (the call, the failure, the diff, the result).
# Without a token, a service on this host is called through its control socket when this user may
# open it (root with become, or the service's user): the OS vouches for the caller, and nothing a
# program holding the TCP port could catch is ever sent.
import http.client
import json
import os
import socket
import stat
from urllib.parse import urlsplit

from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.urls import fetch_url

SERVICE_ARGS = dict(
    url=dict(type='str', default='http://127.0.0.1:8750'),
    token=dict(type='str', no_log=True),
    control_socket=dict(type='path'),
    validate_certs=dict(type='bool', default=True),
    ca_path=dict(type='path'),
    timeout=dict(type='int', default=30),
)


def service_args(**extra):
    """The shared options plus the module's own."""
    args = dict(SERVICE_ARGS)
    args.update(extra)
    return args


class ServiceError(Exception):
    """A refusal or failure of the service: msg is its problem detail, as the service wrote it."""

    def __init__(self, msg, status=None, problem=None):
        super().__init__(msg)
        self.msg = msg
        self.status = status
        self.problem = problem

    @property
    def code(self):
        return (self.problem or {}).get('code')

    def fail(self, module, **result):
        """Ends the task: failed, msg = the service's detail, with the status, code and problem."""
        module.fail_json(msg=self.msg, status=self.status, code=self.code, problem=self.problem, **result)


LOOPBACK = ('127.0.0.1', 'localhost', '::1')


def control_socket_path(params):
    """The control socket of the service on this host (powerplan's lib/control-socket.ts)."""
    if params.get('control_socket'):
        return params['control_socket']
    if os.environ.get('POWERPLAN_CONTROL_SOCKET'):
        return os.environ['POWERPLAN_CONTROL_SOCKET']
    state = os.environ.get('POWERPLAN_STATE_DIR') or '/var/lib/powerplan'
    return os.path.join(state, 'control', 'powerplan.sock')


def trusted_socket(path):
    """
    Whether path is a socket in a directory of root or this user that no one else may enter: one
    the service made. Anything else (absent, another owner, open to others) is not used.
    """
    try:
        d = os.lstat(os.path.dirname(path))
        s = os.lstat(path)
    except OSError:
        return False
    owners = (0, os.geteuid())
    return (stat.S_ISDIR(d.st_mode) and d.st_uid in owners and not d.st_mode & 0o077
            and stat.S_ISSOCK(s.st_mode) and s.st_uid in owners)


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix domain socket (the service's control socket)."""

    def __init__(self, socket_path, timeout):
        super().__init__('localhost', timeout=timeout)
        self.socket_path = socket_path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def open_control_socket(params, timeout):
    """
    A connection on the control socket, for a loopback url without a token; None when there is
    none this user may open (not root or the service's user: EACCES; the service not running).
    """
    if params.get('token') or urlsplit(params['url']).hostname not in LOOPBACK:
        return None
    path = control_socket_path(params)
    if not trusted_socket(path):
        return None
    conn = UnixHTTPConnection(path, timeout)
    try:
        conn.connect()
    except OSError:
        return None
    return conn


class Service:
    def __init__(self, module):
        self.module = module
        self.base = module.params['url'].rstrip('/')
        self.token = module.params.get('token')

    def _over_socket(self, conn, method, path, data, headers):
        """One call on the control socket: (status, body, message)."""
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read(), resp.reason
        except (OSError, http.client.HTTPException) as e:
            return -1, b'', str(e)
        finally:
            conn.close()

    def _over_tcp(self, method, path, data, headers, timeout):
        """One call to url: (status, body, message)."""
        if self.token:
            headers['Authorization'] = 'Bearer ' + self.token
        resp, info = fetch_url(
            self.module,
            self.base + path,
            data=data,
            headers=headers,
            method=method,
            timeout=timeout,
            ca_path=self.module.params.get('ca_path'),
        )
        # On an HTTP error fetch_url has read the body already: it is in info, not in resp.
        if 'body' in info:
            raw = info['body']
        else:
            raw = resp.read() if resp is not None else b''
        return info.get('status', -1), raw, info.get('msg')

    def request(self, method, path, body=None, timeout=None):
        """One call; returns the JSON answer of a 2xx, raises ServiceError otherwise."""
        headers = {'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers['Content-Type'] = 'application/json'
        timeout = timeout or self.module.params['timeout']
        conn = open_control_socket(self.module.params, timeout)
        where = conn.socket_path if conn else self.base
        if conn:
            status, raw, msg = self._over_socket(conn, method, path, data, headers)
        else:
            status, raw, msg = self._over_tcp(method, path, data, headers, timeout)
        text = to_text(raw or b'', errors='surrogate_or_strict')
        answer = None
        if text:
            try:
                answer = json.loads(text)
            except ValueError:
                answer = None
        if 200 <= status < 300:
            return answer if answer is not None else {}
        if isinstance(answer, dict) and 'detail' in answer:
            raise ServiceError(answer['detail'], status=status, problem=answer)
        if status == -1 or status is None:
            raise ServiceError(f"{where}: no answer from the powerplan service: {msg}", status=None)
        raise ServiceError(f"{where}{path}: HTTP {status} ({msg}), not an answer of the powerplan service", status=status)

    def resolve(self, reference):
        """The plan the service resolves a reference to (alias, name or id): a dry-run set, nothing changes."""
        return self.request('PUT', '/v1/plans/active', {'plan': reference, 'dryRun': True, 'force': True}).get('after') or {}


def run_module(module, work):
    """
    Runs work(service, result) and ends the task with the result it returns: with --diff, its
    before and after as the diff. A refusal of the service fails the task (changed=false, msg =
    its detail) with what work had put in result by then.
    """
    service = Service(module)
    result = dict(changed=False)
    try:
        result = work(service, result)
    except ServiceError as e:
        e.fail(module, **result)
    if module._diff and 'before' in result:
        result['diff'] = dict(before=result['before'], after=result['after'])
    module.exit_json(**result)


def plan_view(plan):
    """A plan as the modules show it in diffs and results: name, id, kind."""
    if not plan:
        return None
    return {'name': plan.get('name'), 'id': plan.get('id'), 'kind': plan.get('kind')}
