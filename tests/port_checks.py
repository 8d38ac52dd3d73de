"""The one check every handler test makes of its port: ``Broker`` and the test's fake have each of its methods.

mypy checks the types where dispatch builds each handler from the broker (``PortHandler.make`` takes a
``Ports``); a fake is checked by nothing else, so a port method added or renamed would leave a fake
behind without a word. This compares names and parameters of every public method of the port.
"""

from __future__ import annotations

import inspect


def assert_provides(port: type, *implementations: type) -> None:
    for name, method in inspect.getmembers(port, inspect.isfunction):
        if name.startswith("_"):
            continue
        for implementation in implementations:
            assert list(inspect.signature(getattr(implementation, name)).parameters) == \
                list(inspect.signature(method).parameters), (implementation, name)
