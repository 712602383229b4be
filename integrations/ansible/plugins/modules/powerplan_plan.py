#!/usr/bin/python
# Makes a plan the active one (state=active), or the service's desired plan (state=desired), or
# leaves the service without a desired plan (state=absent). Check mode asks the service what would
# change; diff mode shows the plan before and after.

DOCUMENTATION = r"""
module: powerplan_plan
short_description: Set the active or the desired power plan
description:
  - With I(state=active) (the default), makes I(plan) the active power plan
    (C(PUT /v1/plans/active)). The plan already active is C(changed=false) and nothing is touched.
  - With I(state=desired), makes I(plan) the service's desired plan (C(PUT /v1/desired)), the
    plan the server should normally run. The service checks it every interval and, with
    I(enforce), sets it back when something else changed it. The active plan is not switched by
    this; use I(state=active) for that.
  - With I(state=absent), the service has no desired plan (it stops watching for drift).
  - In check mode the service is asked what would change (a dry run) and nothing is changed.
    In diff mode the plan before and after is shown.
  - A refusal (an unknown plan, a plan held by a maintenance window, a read-only token) fails the
    task with the service's explanation as C(msg). Needs the C(control) scope with a token file.
version_added: 0.1.0
author: powerplan
extends_documentation_fragment:
  - powerplan.powerplan.service
  - powerplan.powerplan.service.changes
options:
  plan:
    description:
      - The plan, as the service accepts it - its id (a Windows GUID, a tuned or
        power-profiles-daemon profile, a cpufreq governor), a kind alias (C(high-performance),
        C(ultimate-performance), C(balanced), C(power-saver)), a powercfg alias (C(SCHEME_MIN),
        C(SCHEME_MAX), C(SCHEME_BALANCED)) or the exact plan name (case-insensitive).
      - Required unless I(state=absent).
    type: str
  state:
    description:
      - C(active) - the plan is the active plan.
      - C(desired) - the plan is the service's desired plan.
      - C(absent) - the service has no desired plan.
    type: str
    choices: [active, desired, absent]
    default: active
  create:
    description:
      - With I(state=active), create the plan first when it is a well-known plan that is not
        installed (Ultimate Performance, High performance).
    type: bool
    default: false
  force:
    description:
      - With I(state=active), set the plan although holds are in force (they end, and nothing is
        restored afterwards) or another desired plan is enforced. Without it the service refuses.
    type: bool
    default: false
  enforce:
    description:
      - With I(state=desired), set the plan back when it drifts. When not given, the service's
        setting (C(POWERPLAN_ENFORCE)) decides for a new desired plan and an existing one keeps its
        own.
    type: bool
"""

EXAMPLES = r"""
- name: High performance on the database servers
  powerplan.powerplan.powerplan_plan:
    plan: high-performance

- name: Ultimate Performance, created where it is not installed
  powerplan.powerplan.powerplan_plan:
    plan: ultimate-performance
    create: true

- name: The plan the servers should run, set back by the service when it drifts
  powerplan.powerplan.powerplan_plan:
    plan: high-performance
    state: desired
    enforce: true

- name: From the control node, with a token, for Windows hosts
  powerplan.powerplan.powerplan_plan:
    url: "https://{{ inventory_hostname }}:8750"
    token: "{{ vault_powerplan_token }}"
    plan: 8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c
  delegate_to: localhost
"""

RETURN = r"""
changed:
  description: Whether the plan was (in check mode, would be) changed.
  returned: always
  type: bool
before:
  description:
    - With I(state=active), the active plan before (C(name), C(id), C(kind)).
    - With I(state=desired) or I(state=absent), the desired plan before (C(plan), C(id), C(enforce)).
  returned: success
  type: dict
  sample: {name: Balanced, id: 381b4222-f694-41f0-9685-ff5bb260df2e, kind: balanced}
after:
  description: The same after the change (in check mode, what it would be).
  returned: success
  type: dict
  sample: {name: High performance, id: 8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c, kind: high-performance}
result:
  description: The service's whole answer (C(PUT /v1/plans/active) or C(/v1/desired)).
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.powerplan.powerplan.plugins.module_utils.powerplan import plan_view, run_module, service_args


def set_active(module, service):
    body = {'plan': module.params['plan'], 'create': module.params['create'], 'force': module.params['force']}
    # The dry run first: in check mode it is the answer; otherwise it decides whether to call again.
    answer = service.request('PUT', '/v1/plans/active', dict(body, dryRun=True))
    if answer.get('changed') and not module.check_mode:
        answer = service.request('PUT', '/v1/plans/active', dict(body, dryRun=False))
    for warning in answer.get('warnings') or []:
        module.warn(warning)
    return bool(answer.get('changed')), plan_view(answer.get('before')), plan_view(answer.get('after')), answer


def desired_view(state):
    return {'plan': state.get('planName'), 'id': state.get('planId'), 'enforce': bool(state.get('enforce'))}


def set_desired(module, service):
    current = service.request('GET', '/v1/desired')
    before = desired_view(current)
    if module.params['state'] == 'absent':
        after = {'plan': None, 'id': None, 'enforce': before['enforce']}
        body = {'plan': None}
    else:
        target = service.resolve(module.params['plan'])
        enforce = module.params['enforce']
        if enforce is None:
            enforce = before['enforce'] if before['id'] else None
        after = {'plan': target.get('name'), 'id': target.get('id'), 'enforce': before['enforce'] if enforce is None else enforce}
        body = {'plan': target.get('id')}
        if enforce is not None:
            body['enforce'] = enforce
    changed = before['id'] != after['id'] or (after['id'] is not None and before['enforce'] != after['enforce'])
    answer = current
    if changed and not module.check_mode:
        answer = service.request('PUT', '/v1/desired', body)
        after = desired_view(answer)
    return changed, before, after, answer


def set_plan(module, service):
    change = set_active if module.params['state'] == 'active' else set_desired
    changed, before, after, answer = change(module, service)
    return dict(changed=changed, before=before, after=after, result=answer)


def main():
    module = AnsibleModule(
        argument_spec=service_args(
            plan=dict(type='str'),
            state=dict(type='str', default='active', choices=['active', 'desired', 'absent']),
            create=dict(type='bool', default=False),
            force=dict(type='bool', default=False),
            enforce=dict(type='bool'),
        ),
        required_if=[('state', 'active', ['plan']), ('state', 'desired', ['plan'])],
        supports_check_mode=True,
    )
    run_module(module, lambda service, _result: set_plan(module, service))


if __name__ == '__main__':
    main()
