"""The application: training runs and what is done with them, over the library below.

A run is a directory (`runs/<model>-<data>-<time>/`) holding a trained
classifier, its settings, the data it read and its metrics. Each module is
one thing a user does with runs; the command line (`hierattn.cli`) maps its
options onto one of their calls.

* `config`: `TrainConfig`, a run's settings, validated once.
* `sources`: where a run's data comes from (IMDB, tables, `resume`).
* `run_context`: a run's data (`RunData`, `Split`) and where it goes
  (`RunContext`), handed down with its `TrainConfig`.
* `train`: training a run: its classifier made or resumed and fitted
  (`network`), its baseline (`baseline`) and data record (`data_record`).
* `directory`: run directories (finding, claiming); `run`: a complete run found once (`Run`, `load_run`).
* `evaluate`, `predict`, `explain`: evaluating, predicting and explaining
  with a trained run.
"""

from hierattn.runs.run import load_run

__all__ = ["load_run"]
