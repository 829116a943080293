"""The face (impl.py, common/face.py): each one-line method hands its call, whole, to
the method of the service the adapter holds under the name it gives."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.jammi.common.face import hands_to
from dbt.adapters.jammi.impl import JammiAdapter

IMPL = Path(__file__).resolve().parents[3] / "dbt" / "adapters" / "jammi" / "impl.py"


class Counter:
    def add(self, a: int, b: int = 1) -> int:
        """a plus b"""
        return a + b


class Face(metaclass=AdapterMeta):
    add = hands_to("_counter", Counter.add)
    maybe = hands_to("_counter", Counter.add, parse_none=True)

    def __init__(self, counter: object) -> None:
        self._counter = counter


class Recorded:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def add(self, *args: object, **kwargs: object) -> str:
        self.calls.append((args, kwargs))
        return "recorded"


def test_a_face_method_calls_the_service_the_instance_holds_with_every_argument():
    assert Face(Counter()).add(2, b=3) == 5
    fake = Recorded()
    assert Face(fake).add(1, b=2) == "recorded"  # looked up by name: a fake will do
    assert fake.calls == [((1,), {"b": 2})]


def test_a_face_method_is_available_to_jinja_with_the_services_signature():
    assert {"add", "maybe"} <= set(Face._available_)
    assert "maybe" in Face._parse_replacements_ and "add" not in Face._parse_replacements_
    assert str(inspect.signature(Face.add)) == str(inspect.signature(Counter.add))
    assert Face.add.__doc__ == "a plus b"


def test_every_face_line_of_the_adapter_names_a_service_it_builds_and_a_method_it_has():
    text = IMPL.read_text()
    lines = re.findall(r"^    (\w+) = hands_to\(\s*\"(_\w+)\", (\w+)\.(\w+)", text, re.M)
    assert len(lines) >= 30
    built = set(re.findall(r"self\.(_\w+)(?: = | = sql = )", text))
    for name, service, cls, method in lines:
        assert service in built, f"{name}: the adapter builds no {service}"
        assert name in JammiAdapter._available_, name
        assert (
            inspect.signature(getattr(JammiAdapter, name)).parameters.keys()
            == (
                inspect.signature(getattr(getattr(inspect.getmodule(JammiAdapter), cls), method))
            ).parameters.keys()
        )
