"""``python -m minikafka``: the same as the ``minikafka`` command."""

from .cli.main import main

raise SystemExit(main())
