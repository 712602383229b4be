# The options every powerplan module shares: where the service is and how to authenticate; and
# the attributes of the modules that change something (powerplan.powerplan.service.changes).


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  url:
    description:
      - The powerplan service, C(http://host:port) or C(https://host:port).
      - The module runs on the managed host (or where the task is delegated), so the default
        loopback address reaches that host's own service.
    type: str
    default: http://127.0.0.1:8750
  token:
    description:
      - Bearer token of the service's token file, with the scope the module needs (C(read) for
        powerplan_info, C(control) to set or hold a plan). Keep it in Ansible Vault.
      - When not given (or empty) and I(url) is a loopback address, the module calls through
        the service's control socket, I(control_socket), which only root (C(become)) and the
        service's user may open, and which has control without any credential. When it cannot
        be opened, the module calls I(url) without a token; the service answers such callers for
        reading only.
    type: str
  control_socket:
    description:
      - The control socket of the service on the host the module runs on (a Unix domain socket
        in a directory only the service's user and root may enter; see docs/SECURITY.md of
        powerplan, "Local control").
      - Used only without I(token) and for a loopback I(url), and only when it is a socket in a
        directory of root or this user that no one else may enter. No credential is sent on it
        or anywhere else.
      - Default C(POWERPLAN_CONTROL_SOCKET) when set in the module's environment, else
        C(control/powerplan.sock) in C(POWERPLAN_STATE_DIR), else
        C(/var/lib/powerplan/control/powerplan.sock).
    type: path
  validate_certs:
    description:
      - Verify the service's TLS certificate (C(https) URLs). Leave it on; trust the certificate
        with I(ca_path) or the system's CA store instead.
    type: bool
    default: true
  ca_path:
    description:
      - A PEM file with the certificate (or its CA) to trust for an C(https) service.
    type: path
  timeout:
    description: Seconds to wait for the service's answer.
    type: int
    default: 30
notes:
  - A refusal by the service fails the task with the service's own explanation as C(msg)
    (its problem+json C(detail), word for word), and returns C(status) (the HTTP status; none
    when the service did not answer), C(code) (the service's problem code such as C(not_found),
    C(forbidden), C(conflict), C(busy)) and C(problem) (the whole problem+json answer). These
    failure values are the same for every module of the collection.
"""

    # The modules that change something: check mode and diff mode in full.
    CHANGES = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""
