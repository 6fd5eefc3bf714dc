"""xaclab contracts: what the agent and the server must agree on, written once.

The files programs read live in contracts/ (docs/architecture.md): the suite
declarations and their schema, the result format's schema, the fingerprint
fields and the thesis's figures.  This package reads them, and holds the one
copy of each check both sides make:

- :mod:`.suites` — parsing suite files, checking a job's params, building argv.
- :mod:`.factors` — the five factors every suite takes (the agent applies them).
- :mod:`.roles` — each result param's role (workload, system, observed).
- :mod:`.results` — validating a result; :mod:`.histogram` — its histogram.
- :mod:`.fingerprint` — the fingerprint hash and the field lists.
- :mod:`.secret_env` — secrets from ``NAME`` or the file ``NAME_FILE`` names.
- :mod:`.files` — where the files are, in a checkout or installed.

Exception hierarchy (all ``ValueError``, each message a sentence)::

    SuiteError           unknown suite or profile, a declaration that breaks the rules
     └── ParamError      a job parameter outside its declaration
    ResultFormatError    a result the format refuses (``where``: the path)
    HistogramError       an inconsistent histogram (``where``: below ``histogram``)
    SecretFileError      a ``NAME_FILE`` variable that clashes or names a bad file
"""

from xaclab_contracts.histogram import HistogramError
from xaclab_contracts.results import ResultFormatError
from xaclab_contracts.secret_env import SecretFileError
from xaclab_contracts.suites import ParamError, SuiteError

__all__ = ["HistogramError", "ParamError", "ResultFormatError", "SecretFileError", "SuiteError"]
