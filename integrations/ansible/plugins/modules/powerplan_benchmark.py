#!/usr/bin/python
# Runs the service's short CPU benchmark (what the power plan costs); not in check mode.

DOCUMENTATION = r"""
module: powerplan_benchmark
short_description: Run the CPU benchmark that measures what the power plan costs
description:
  - Runs the service's CPU benchmark (C(POST /v1/benchmarks)) - how much slower a burst of work
    runs after the CPU was idle than on a warm core, and single-thread and all-core throughput -
    and returns its summary. The service keeps it as evidence for its recommendation.
  - It loads every CPU for a few seconds; the service refuses when the CPU is already busy unless
    I(force) is given, and the task fails with its explanation as C(msg).
  - Changes no setting (C(changed=false)). In check mode it does not run.
  - Needs the C(benchmark) scope with a token file.
version_added: 0.1.0
author: powerplan
extends_documentation_fragment:
  - powerplan.powerplan.service
options:
  profile:
    description: C(quick) (about 5 seconds) or C(standard) (about 20 seconds, more repetitions).
    type: str
    choices: [quick, standard]
    default: quick
  force:
    description: Run even when the CPU is already more than 30% busy.
    type: bool
    default: false
attributes:
  check_mode:
    support: partial
    details: In check mode the benchmark does not run and nothing is returned but C(skipped).
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Measure what the plan costs
  powerplan.powerplan.powerplan_benchmark:
    timeout: 120
  register: bench

- name: Show the burst penalty
  ansible.builtin.debug:
    msg: "{{ bench.summary.plan }}: burst penalty {{ bench.summary.burstPenaltyPercent }} %"
"""

RETURN = r"""
summary:
  description: The benchmark's summary (C(plan), C(burstPenaltyPercent), C(singleThreadMops), C(allCoreMops), C(noisy), ...).
  returned: success, not in check mode
  type: dict
benchmark:
  description: The whole benchmark as the service stored it (C(id), C(profile), phases, warnings).
  returned: success, not in check mode
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.powerplan.powerplan.plugins.module_utils.powerplan import run_module, service_args


def measure(module, service):
    answer = service.request('POST', '/v1/benchmarks', {'profile': module.params['profile'], 'force': module.params['force']},
                             timeout=max(module.params['timeout'], 120))
    for warning in answer.get('warnings') or []:
        module.warn(warning)
    # A measurement changes no setting.
    return dict(changed=False, summary=answer.get('summary'), benchmark=answer)


def main():
    module = AnsibleModule(
        argument_spec=service_args(
            profile=dict(type='str', default='quick', choices=['quick', 'standard']),
            force=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, msg='The benchmark does not run in check mode (it loads every CPU).')
    run_module(module, lambda service, _result: measure(module, service))


if __name__ == '__main__':
    main()
