"""League training (``bali league-train``): a main policy trained over generations against a
population of its past selves and of exploiters trained to beat it, with prioritised fictitious
self-play (AlphaStar's league; PSRO's population of best responses). One job per module:

| module | what |
|---|---|
| ``league_command.py`` | ``bali league-train``: its flags and checks, the output folder, ``--resume``, its last lines |
| ``league_settings.py`` | the run's settings as one frozen record (``LeagueTrainSettings``), checked once |
| ``league_run.py`` | the run: its generations (jobs, payoff rows, pictures), ``best.npz`` and ``summary.json`` |
| ``league_jobs.py`` | a job as a frozen record (``LeagueJob``: exploiter, main, yardstick), its seed, ``run_job`` |
| ``job_pool.py`` | where the jobs run: this process, local worker processes or Ray tasks |
| ``pfsp.py`` | the PFSP weights of the main's opponents from its win rates |
| ``payoff.py`` | the payoff evaluation: the main against each member and baseline, its own tournament seeds |
| ``ledger.py`` | ``league.json``: the settings, every finished job and payoff row (what ``--resume`` reads) |
| ``league_plots.py`` | ``league.csv``, ``league.png`` (by generation) and ``payoff.png`` (the payoff matrix) |
| ``candidates.py`` | which main becomes ``best.npz``, and why |

Every job is a whole ``bali train`` (or ``bali exploit``) run with a ``--steps`` budget, a seed of
its own and fixed threads, so a run gives the same networks on any number of workers, on either
backend, and when interrupted and resumed. How to run one: docs/training.md.
"""
