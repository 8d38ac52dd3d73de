"""Fake sign-up events for the course's ``fakeusers`` topic, made with Faker.

Each event is one person registering on an imaginary web shop: who they are (name,
e-mail, postal address, country), when they signed up (``signup_ts``, the *event
time* that stream processors window on), the plan they chose, how they found the
shop, and ``registered_year``, the year their customer record was first created
(the ``created_at`` year of the course's original example, kept so older customers
migrating to the new shop can be counted by decade).

With a seed the content is reproducible: ``FakeUsers(seed=7)`` yields the same people
in the same order on every machine. Event times come from the wall clock unless you
give a ``start``, then they advance by ``interval`` seconds per event, which makes the
whole stream reproducible (tests and the Spark notebook rely on that).

    users = FakeUsers(seed=7)
    event = next(users)                 # a dict, ready for json.dumps
    producer.produce("fakeusers", key=key_of(event), value=serialize(event))

The key is the user id: every later event about one user (a profile change, an
order) lands in the same partition as the sign-up and stays in order after it, while
distinct users spread evenly over the partitions.
"""

from __future__ import annotations

import json
import random
import time
import unicodedata
import uuid
from collections.abc import Iterator
from typing import Any
from datetime import datetime, UTC

# Locale -> weight: more shoppers from some countries than others, so per-country
# counts differ in a way you can see.
DEFAULT_LOCALES = {"en_US": 4, "es_ES": 3, "de_DE": 2, "fr_FR": 2, "it_IT": 1, "pt_BR": 1, "en_GB": 1}
PLANS = {"free": 70, "pro": 25, "business": 5}
CHANNELS = {"organic": 40, "search": 25, "social": 20, "referral": 10, "ads": 5}
FIELDS = ("user_id", "name", "email", "address", "country", "registered_year", "plan", "channel", "signup_ts")


def parse_locales(text: str | None) -> dict[str, int]:
    """``"es_ES"`` or ``"es_ES,en_US"`` -> equal weights; None -> the default mix.

    Raises ValueError with a sentence naming the locale Faker does not know.
    """
    if not text:
        return dict(DEFAULT_LOCALES)
    from faker.config import AVAILABLE_LOCALES
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in AVAILABLE_LOCALES]
    if unknown or not names:
        raise ValueError(f"Faker has no locale {', '.join(unknown) or repr(text)}; "
                         f"try one like es_ES, en_US or fr_FR.")
    return dict.fromkeys(names, 1)


class FakeUsers:
    """An endless, optionally seeded, iterator of sign-up events (dicts).

    ``locales`` maps Faker locale names to weights. ``start`` (epoch seconds) switches
    event time from the wall clock to a synthetic clock that advances ``interval``
    seconds per event.
    """

    def __init__(self, seed: int | None = None, locales: dict[str, int] | None = None,
                 start: float | None = None, interval: float = 1.0):
        from faker import Faker
        self.locales = dict(locales or DEFAULT_LOCALES)
        self._faker = Faker(list(self.locales))
        self._rng = random.Random(seed)
        if seed is not None:
            for locale in self.locales:  # one stream per locale, each with its own seed
                self._faker[locale].seed_instance(f"{seed}/{locale}")
        self._start, self._interval = start, interval
        self.produced = 0

    def __iter__(self) -> FakeUsers:
        return self

    def __next__(self) -> dict:
        locale = self._pick(self.locales)
        fake = self._faker[locale]
        first, last = fake.first_name(), fake.last_name()
        event = {
            "user_id": str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
            "name": f"{first} {last}",
            "email": _email(first, last, self._rng.randrange(100), fake.free_email_domain()),
            "address": fake.address(),
            "country": fake.current_country_code(),
            "registered_year": int(fake.year()),
            "plan": self._pick(PLANS),
            "channel": self._pick(CHANNELS),
            "signup_ts": _iso(self._event_time()),
        }
        self.produced += 1
        return event

    def take(self, n: int) -> list[dict]:
        """The next ``n`` events as a list."""
        return [next(self) for _ in range(n)]

    def _pick(self, weights: dict[str, int]) -> str:
        return self._rng.choices(list(weights), weights=list(weights.values()))[0]

    def _event_time(self) -> float:
        if self._start is None:
            return time.time()
        return self._start + self.produced * self._interval


def serialize(event: dict) -> bytes:
    """The event as UTF-8 JSON (accents kept as they are, not escaped)."""
    return json.dumps(event, ensure_ascii=False).encode("utf-8")


def key_of(event: dict) -> bytes:
    """The record key: the user id, so one user's events keep their order in one partition."""
    return event["user_id"].encode("ascii")


def _email(first: str, last: str, number: int, domain: str) -> str:
    def plain(text: str) -> str:
        text = text.replace("ß", "ss")  # the one common letter NFKD does not decompose
        ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        return "".join(c for c in ascii_text.lower() if c.isalnum())
    return f"{plain(first)}.{plain(last)}{number or ''}@{domain}"


def _iso(epoch_seconds: float) -> str:
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Pacer:
    """Keeps a loop at ``rate`` iterations per second (None or 0: as fast as possible).

    It schedules iteration ``i`` at ``start + i / rate`` instead of sleeping a fixed time
    after each send, so the time spent producing does not slow the rate down.
    """

    def __init__(self, rate: float | None):
        self.rate = rate or None
        self.start = time.monotonic()

    def wait(self, i: int) -> None:
        """Sleep until iteration ``i`` is due."""
        if self.rate:
            delay = self.start + i / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def measured(self, done: int) -> float:
        """Iterations per second achieved so far."""
        elapsed = time.monotonic() - self.start
        return done / elapsed if elapsed > 0 else 0.0


def events(count: int, seed: int | None = None, **kwargs: Any) -> Iterator[dict]:  # FakeUsers' other arguments
    """``count`` events from a fresh ``FakeUsers`` (a bounded helper for loops)."""
    users = FakeUsers(seed=seed, **kwargs)
    for _ in range(count):
        yield next(users)
