# The powerplan service's REST API for the collection's modules: one request function, the shared
# options, the service's problem+json turned into the task's failure (msg = the detail), and the
# run every module shares (the call, the failure, the diff, the result).
import json
import os
import re
from urllib.parse import urlsplit

from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.urls import fetch_url

SERVICE_ARGS = dict(
    url=dict(type='str', default='http://127.0.0.1:8750'),
    token=dict(type='str', no_log=True),
    admin_token_file=dict(type='path'),
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
ADMIN_TOKEN = re.compile(r'^pp_[A-Za-z0-9_-]{43}$')


def admin_token_path(params):
    """Where the service on this host keeps its local administrator credential."""
    if params.get('admin_token_file'):
        return params['admin_token_file']
    return os.path.join(os.environ.get('POWERPLAN_STATE_DIR') or '/var/lib/powerplan', 'admin.token')


def local_admin_token(params):
    """
    The service's local administrator credential (control scope), for a service on this host
    only: it counts from loopback callers alone, so it is never sent anywhere else. Readable by
    root (become: true); for anyone else, or when absent, None, and the call goes without a token
    (which the service answers for reading only).
    """
    if urlsplit(params['url']).hostname not in LOOPBACK:
        return None
    try:
        with open(admin_token_path(params), encoding='ascii') as f:
            text = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if ADMIN_TOKEN.match(text) else None


class Service:
    def __init__(self, module):
        self.module = module
        self.base = module.params['url'].rstrip('/')
        self.token = module.params.get('token') or local_admin_token(module.params)

    def request(self, method, path, body=None, timeout=None):
        """One call; returns the JSON answer of a 2xx, raises ServiceError otherwise."""
        headers = {'Accept': 'application/json'}
        if self.token:
            headers['Authorization'] = 'Bearer ' + self.token
        data = None
        if body is not None:
            data = json.dumps(body)
            headers['Content-Type'] = 'application/json'
        resp, info = fetch_url(
            self.module,
            self.base + path,
            data=data,
            headers=headers,
            method=method,
            timeout=timeout or self.module.params['timeout'],
            ca_path=self.module.params.get('ca_path'),
        )
        status = info.get('status', -1)
        # On an HTTP error fetch_url has read the body already: it is in info, not in resp.
        if 'body' in info:
            raw = info['body']
        else:
            raw = resp.read() if resp is not None else b''
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
            raise ServiceError(f"{self.base}: no answer from the powerplan service: {info.get('msg')}", status=None)
        raise ServiceError(f"{self.base}{path}: HTTP {status} ({info.get('msg')}), not an answer of the powerplan service", status=status)


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
