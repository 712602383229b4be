#!/usr/bin/python
# Reads what the powerplan service knows: the active plan, and on request the installed plans,
# holds, desired state and the recommendation. Changes nothing, also in check mode.

DOCUMENTATION = r"""
module: powerplan_info
short_description: Read the active power plan, plans, holds, desired state and advice
description:
  - Asks the powerplan service for the power plan in force (C(GET /v1/plans/active)) - the plan,
    its processor settings, who owns the policy and whether it can be changed.
  - With I(include), also the installed plans, the holds in force, the desired state and the
    recommendation for a workload.
  - Changes nothing; runs in check mode too. Needs the C(read) scope with a token file.
version_added: 0.1.0
author: powerplan
extends_documentation_fragment:
  - powerplan.powerplan.service
options:
  include:
    description:
      - What to read besides the active plan.
      - C(plans) (C(GET /v1/plans)), C(holds) (C(GET /v1/holds)), C(desired) (C(GET /v1/desired)),
        C(recommendation) (C(GET /v1/recommendation), see I(workload) and I(benchmark)).
    type: list
    elements: str
    choices: [plans, holds, desired, recommendation]
    default: []
  workload:
    description: The workload the recommendation is for.
    type: str
    choices: [database, batch, latency, energy-saving]
    default: database
  benchmark:
    description:
      - Evidence for the recommendation. C(latest) uses a recent benchmark stored under the
        active plan, C(none) the rules alone. Asking never runs a benchmark; to measure now, run
        M(powerplan.powerplan.powerplan_benchmark) first.
    type: str
    choices: [latest, none]
    default: latest
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Read the plan in force
  powerplan.powerplan.powerplan_info:
  register: pp

- name: Show it
  ansible.builtin.debug:
    msg: "{{ pp.active.plan.name }} ({{ pp.active.plan.kind }}), owner {{ pp.active.owner }}"

- name: Plans, holds and the advice for a database server, from the control node with a token
  powerplan.powerplan.powerplan_info:
    url: "https://{{ inventory_hostname }}:8750"
    token: "{{ vault_powerplan_token }}"
    include: [plans, holds, recommendation]
    workload: database
  delegate_to: localhost
  register: pp
"""

RETURN = r"""
active:
  description: The active plan as C(GET /v1/plans/active) answers it.
  returned: always
  type: dict
  contains:
    plan:
      description: The plan in force (C(id), C(name), C(kind), ...); null when none is.
      type: dict
    processor:
      description: Processor settings of the plan (minimum and maximum state, EPP, governor, ...).
      type: dict
    owner:
      description: Who owns the policy (powercfg, tuned, power-profiles-daemon, sysfs, simulated).
      type: str
    policyManaged:
      description: True when group policy sets the plan (a change would be reverted).
      type: bool
    canSet:
      description: Whether the service can change the plan here.
      type: bool
  sample:
    plan: {id: 381b4222-f694-41f0-9685-ff5bb260df2e, name: Balanced, kind: balanced}
    owner: powercfg
    policyManaged: false
    canSet: true
plans:
  description: The installed plans (C(GET /v1/plans) C(plans)).
  returned: when I(include) has C(plans)
  type: list
  elements: dict
holds:
  description: The holds in force and the plan they restore (C(GET /v1/holds)).
  returned: when I(include) has C(holds)
  type: dict
desired:
  description: The desired plan, whether it is enforced and the state found (C(GET /v1/desired)).
  returned: when I(include) has C(desired)
  type: dict
recommendation:
  description: The recommended plan with its reasons and evidence (C(GET /v1/recommendation)).
  returned: when I(include) has C(recommendation)
  type: dict
"""

from urllib.parse import urlencode

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.powerplan.powerplan.plugins.module_utils.powerplan import run_module, service_args


def read(module, service, result):
    """Fills result as the answers come, so a failure still returns what was read."""
    include = module.params['include']
    result['active'] = service.request('GET', '/v1/plans/active')
    if 'plans' in include:
        result['plans'] = service.request('GET', '/v1/plans').get('plans', [])
    if 'holds' in include:
        result['holds'] = service.request('GET', '/v1/holds')
    if 'desired' in include:
        result['desired'] = service.request('GET', '/v1/desired')
    if 'recommendation' in include:
        query = urlencode({'workload': module.params['workload'], 'benchmark': module.params['benchmark']})
        result['recommendation'] = service.request('GET', '/v1/recommendation?' + query)
    return result


def main():
    module = AnsibleModule(
        argument_spec=service_args(
            include=dict(type='list', elements='str', default=[], choices=['plans', 'holds', 'desired', 'recommendation']),
            workload=dict(type='str', default='database', choices=['database', 'batch', 'latency', 'energy-saving']),
            benchmark=dict(type='str', default='latest', choices=['latest', 'none']),
        ),
        supports_check_mode=True,
    )
    run_module(module, lambda service, result: read(module, service, result))


if __name__ == '__main__':
    main()
