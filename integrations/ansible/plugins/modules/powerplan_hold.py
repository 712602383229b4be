#!/usr/bin/python
# Holds a plan for a maintenance window (state=present) and releases it (state=absent). The
# service puts the plan in force before the first hold back when the last one ends, also when the
# window's time runs out or the service restarts.

DOCUMENTATION = r"""
module: powerplan_hold
short_description: Hold a power plan for a maintenance window, and release it
description:
  - With I(state=present), switches to I(plan) for at most I(duration) (C(POST /v1/holds)). When
    the last hold ends, by release or when its time runs out, the service restores the plan that
    was in force before the first one, also after a crash or restart of the service.
  - A hold in force with the same I(reason) and plan is the same hold - it is returned, not taken
    again (C(changed=false)). Without I(reason) every run takes a new hold.
  - With I(state=absent), releases the hold I(id), or every hold with this I(reason)
    (C(DELETE /v1/holds/{id})). A hold that has already ended is C(changed=false).
  - Overlapping holds must name the same plan; a hold for another plan, or a set while holds are in
    force, is refused by the service, and the task fails with its explanation as C(msg).
  - In check mode nothing is held or released; the result says what would be. Needs the
    C(control) scope with a token file.
version_added: 0.1.0
author: powerplan
extends_documentation_fragment:
  - powerplan.powerplan.service
  - powerplan.powerplan.service.changes
options:
  state:
    description:
      - C(present) - the plan is held.
      - C(absent) - the hold is released.
    type: str
    choices: [present, absent]
    default: present
  plan:
    description:
      - The plan to hold, as the service accepts it (id, kind alias, powercfg alias or exact name).
    type: str
    default: high-performance
  duration:
    description:
      - How long the hold may last at most, as a duration (C(90s), C(45m), C(2h), C(1d),
        C(1h30m); 1 second to 7 days). Make it longer than the work can take - the release is the
        normal end, the duration the safety net.
    type: str
    default: 2h
  reason:
    description:
      - Why the plan is held (up to 200 characters; shown by the service and audited). Also what
        identifies the hold for I(state=present) and I(state=absent).
    type: str
  id:
    description:
      - With I(state=absent), the hold to release (the C(hold.id) of I(state=present)).
    type: str
"""

EXAMPLES = r"""
- name: High performance for the nightly restore, then back to what was in force
  block:
    - name: Hold High performance for at most 4 hours
      powerplan.powerplan.powerplan_hold:
        plan: high-performance
        duration: 4h
        reason: nightly restore
      register: window

    - name: The restore
      ansible.builtin.command: /usr/local/bin/restore-databases
  always:
    - name: Release the hold (the plan before it comes back)
      powerplan.powerplan.powerplan_hold:
        state: absent
        id: "{{ window.hold.id | default(omit) }}"
        reason: nightly restore
"""

RETURN = r"""
changed:
  description: Whether a hold was (in check mode, would be) taken or released.
  returned: always
  type: bool
hold:
  description: The hold (C(id), C(planId), C(planName), C(reason), C(expiresAt), C(secondsRemaining), C(createdBy)).
  returned: when I(state=present), except in check mode for a new hold
  type: dict
released:
  description: The holds released (in check mode, that would be).
  returned: when I(state=absent)
  type: list
  elements: dict
restored:
  description: The plan put back because the last hold ended (C(name), C(id), C(kind)); null when holds remain.
  returned: when I(state=absent) and a hold was released
  type: dict
before:
  description: The active plan and the reasons of the holds in force, before.
  returned: success
  type: dict
after:
  description: The same after (in check mode, what it would be).
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.powerplan.powerplan.plugins.module_utils.powerplan import ServiceError, plan_view, run_module, service_args


def view(plan, holds):
    plan = plan_view(plan) or {}
    return {'plan': plan.get('name'), 'id': plan.get('id'), 'holds': sorted(h.get('reason') or h['id'] for h in holds)}


def present(module, service, active, holds):
    p = module.params
    same = [h for h in holds if p['reason'] and h.get('reason') == p['reason']]
    if same:
        try:
            target = service.resolve(p['plan']).get('id')
        except ServiceError:
            target = None
        match = [h for h in same if h.get('planId') == target]
        if match:
            return dict(changed=False, hold=match[0], before=view(active['plan'], holds), after=view(active['plan'], holds))
    before = view(active['plan'], holds)
    if module.check_mode:
        new = {'id': '(new)', 'reason': p['reason']}
        return dict(changed=True, before=before, after=view(service.resolve(p['plan']), holds + [new]))
    body = {'plan': p['plan'], 'for': p['duration']}
    if p['reason']:
        body['reason'] = p['reason']
    answer = service.request('POST', '/v1/holds', body)
    hold = answer.get('hold') or {}
    return dict(changed=True, hold=hold, before=before, after=view(answer.get('after'), holds + [hold]),
                restore_plan_id=answer.get('restorePlanId'))


def absent(module, service, active, holds, state):
    p = module.params
    if not p['id'] and not p['reason']:
        module.fail_json(msg='state=absent needs the id of the hold to release, or its reason.')
    targets = [h for h in holds if (p['id'] and h['id'] == p['id']) or (not p['id'] and h.get('reason') == p['reason'])]
    before = view(active['plan'], holds)
    left = [h for h in holds if h not in targets]
    if not targets or module.check_mode:
        after_plan = active['plan']
        if targets and not left:
            after_plan = {'id': state.get('restorePlanId'), 'name': state.get('restorePlanName')}
        return dict(changed=bool(targets), released=targets, restored=None, before=before, after=view(after_plan, left))
    released = []
    restored = None
    for h in targets:
        try:
            answer = service.request('DELETE', '/v1/holds/' + h['id'])
        except ServiceError as e:
            if e.status == 404:
                continue  # it ended meanwhile (expired, or a forced set ended it)
            raise
        released.append(answer.get('released') or h)
        if answer.get('restored'):
            restored = plan_view(answer.get('restoredPlan'))
    now = service.request('GET', '/v1/plans/active')
    remaining = service.request('GET', '/v1/holds').get('holds', [])
    return dict(changed=bool(released), released=released, restored=restored, before=before, after=view(now['plan'], remaining))


def hold(module, service):
    active = service.request('GET', '/v1/plans/active')
    state = service.request('GET', '/v1/holds')
    holds = state.get('holds', [])
    if module.params['state'] == 'present':
        return present(module, service, active, holds)
    return absent(module, service, active, holds, state)


def main():
    module = AnsibleModule(
        argument_spec=service_args(
            state=dict(type='str', default='present', choices=['present', 'absent']),
            plan=dict(type='str', default='high-performance'),
            duration=dict(type='str', default='2h'),
            reason=dict(type='str'),
            id=dict(type='str'),
        ),
        supports_check_mode=True,
    )
    run_module(module, lambda service, _result: hold(module, service))


if __name__ == '__main__':
    main()
