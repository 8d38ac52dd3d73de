"""``python -m minikafka COMMAND``: the same as the ``minikafka`` command."""

import sys

from .cli.main import main

sys.exit(main())
