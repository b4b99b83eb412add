"""Unit tests of pg_idgen's Python values and generators: no server needed."""
import datetime as dt
import hashlib
import random
import socket
import threading

import pytest

import pg_idgen
from pg_idgen import Snowflake, SnowflakeClockError, Xid, XidGenerator, rapkey

UTC = dt.timezone.utc
ALPHABET = "0123456789abcdefghijklmnopqrstuv"


def reference_text(b: bytes) -> str:
    """base32hex of 12 bytes, bit by bit (independent of the library's codec)."""
    bits = "".join(f"{x:08b}" for x in b) + "0000"
    return "".join(ALPHABET[int(bits[i:i + 5], 2)] for i in range(0, 100, 5))


# --- Xid: text and bytes ---------------------------------------------------------------

def test_known_vectors():
    assert str(Xid(bytes(12))) == "00000000000000000000"
    assert str(Xid(b"\xff" * 12)) == "vvvvvvvvvvvvvvvvvvvg"
    # rs/xid's documented example id.
    raw = bytes.fromhex("4d88e15b60f486e428412dc9")
    x = Xid("9m4e2mr0ui3e8a215n4g")
    assert x.bytes == raw and bytes(x) == raw
    assert Xid("9M4E2MR0UI3E8A215N4G") == x
    assert str(Xid("9M4E2MR0UI3E8A215N4G")) == "9m4e2mr0ui3e8a215n4g"
    assert x.time == dt.datetime(2011, 3, 22, 17, 50, 19, tzinfo=UTC)
    assert x.unix_seconds == 0x4D88E15B
    assert x.machine == bytes.fromhex("60f486")
    assert x.pid == 0xE428
    assert x.counter == 0x412DC9
    assert Xid.from_parts(0x4D88E15B, bytes.fromhex("60f486"), 0xE428, 0x412DC9) == x
    assert Xid.from_parts(x.time, 0x60F486, 0xE428, 0x412DC9) == x
    assert repr(x) == "Xid('9m4e2mr0ui3e8a215n4g')"


@pytest.mark.parametrize("text, why", [
    ("", "the text has 0 characters."),
    ("0000000000000000000", "the text has 19 characters."),
    ("000000000000000000000", "the text has 21 characters."),
    ("0000000000w000000000", "Character 11 is outside the base32hex alphabet 0-9, a-v."),
    ("000000000 0000000000", "Character 10 is outside"),
    ("000000000\x000000000000", "Character 10 is outside"),
    ("000000000+0000000000", "Character 10 is outside"),
    ("000000000_0000000000", "Character 10 is outside"),
    ("00000000000000000001", "The last character must be 0 or g"),
    ("0000000000000000000v", "The last character must be 0 or g"),
    ("0000000000000000000é", "Character 20 is outside"),
    ("000000000000000000é", "the text has 19 characters."),
    (" 0000000000000000000", "Leading and trailing spaces are not allowed."),
    ("0000000000000000000\n", "Leading and trailing spaces are not allowed."),
    ("+0000000000000000000", "Character 1 is outside"),
])
def test_bad_text_says_why(text, why):
    with pytest.raises(ValueError) as e:
        Xid(text)
    assert why in str(e.value)
    assert str(e.value).startswith("invalid input syntax for type xid12: ")
    with pytest.raises(ValueError):
        Xid.from_str(text)


def test_bad_bytes_and_types():
    for n in (0, 11, 13):
        with pytest.raises(ValueError, match=f"exactly 12 bytes; got {n}"):
            Xid(bytes(n))
        with pytest.raises(ValueError, match=f"got {n}"):
            Xid.from_bytes(bytearray(n))
    for bad in (None, 5, 1.5, ["a"]):
        with pytest.raises(TypeError):
            Xid(bad)
    assert Xid(memoryview(bytes(12))) == Xid(bytes(12))


def test_random_round_trips_match_reference():
    rng = random.Random(21)
    for _ in range(5000):
        b = rng.randbytes(12)
        x = Xid(b)
        t = str(x)
        assert t == reference_text(b)
        assert Xid(t) == x and Xid(t.upper()) == x and Xid(x) == x
        assert Xid.from_bytes(b).bytes == b


def test_accepted_text_is_canonical():
    rng = random.Random(5)
    for _ in range(5000):
        t = "".join(rng.choice(ALPHABET + "ABCDEFGHIJKLMNOPQRSTUV") for _ in range(20))
        try:
            x = Xid(t)
        except ValueError as e:
            assert "last character must be 0 or g" in str(e)
            assert t[-1].lower() not in "0g"
        else:
            assert str(x) == t.lower()


def test_order_hash_and_immutability():
    rng = random.Random(7)
    values = [rng.randbytes(12) for _ in range(2000)]
    values += [values[0][:5] + rng.randbytes(7) for _ in range(200)]
    xs = [Xid(b) for b in values]
    assert [x.bytes for x in sorted(xs)] == sorted(values)
    assert [str(x) for x in sorted(xs)] == sorted(str(x) for x in xs)
    a, b = Xid(values[0]), Xid(values[0])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert not (a != b) and a <= b and a >= b
    # An Xid is its text (since 0.7.0; a bytes subclass before): equal to it, hashed and ordered
    # as it is; the 12 bytes are one attribute away, and never equal to it.
    assert a == str(a) and isinstance(a, str) and hash(a) == hash(str(a))
    assert a != values[0] and a.bytes == values[0] == bytes(a) and type(a.bytes) is bytes
    assert not (a < str(a)) and len(a) == 20
    with pytest.raises(AttributeError):
        a._b = b"x" * 12
    with pytest.raises(AttributeError):
        a.foo = 1
    import copy
    import pickle
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) is a


def test_min_and_max_for():
    t = dt.datetime(2024, 7, 1, 12, 0, 0, 999_999, tzinfo=UTC)
    lo, hi = Xid.min_for(t), Xid.max_for(t)
    s = 1719835200
    assert lo == Xid.from_parts(s, 0, 0, 0) and hi == Xid.from_parts(s, 0xFFFFFF, 0xFFFF, 0xFFFFFF)
    assert Xid.max_for(t - dt.timedelta(seconds=1)) < lo < Xid.from_parts(s, 0, 0, 1) < hi
    other_zone = dt.timezone(dt.timedelta(hours=8))
    assert Xid.min_for(t.astimezone(other_zone)) == lo
    # The ends of the 32-bit second, and one step past them.
    assert Xid.min_for(dt.datetime(1970, 1, 1, tzinfo=UTC)).bytes == bytes(12)
    assert Xid.max_for(dt.datetime(2106, 2, 7, 6, 28, 15, 999_999, tzinfo=UTC)).bytes == b"\xff" * 12
    for bad in (dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
                dt.datetime(2106, 2, 7, 6, 28, 16, tzinfo=UTC)):
        for f in (Xid.min_for, Xid.max_for):
            with pytest.raises(ValueError, match="timestamp out of range for xid12"):
                f(bad)
    with pytest.raises(ValueError, match="aware datetime"):
        Xid.min_for(dt.datetime(2024, 1, 1))
    with pytest.raises(TypeError):
        Xid.max_for("2024-01-01")


def test_from_parts_range_errors():
    with pytest.raises(ValueError, match="counter 16777216 is outside"):
        Xid.from_parts(0, 0, 0, 1 << 24)
    with pytest.raises(ValueError, match="counter -1"):
        Xid.from_parts(0, 0, 0, -1)
    with pytest.raises(ValueError, match="pid 65536"):
        Xid.from_parts(0, 0, 65536, 0)
    with pytest.raises(ValueError, match="machine id 16777216"):
        Xid.from_parts(0, 1 << 24, 0, 0)
    with pytest.raises(ValueError, match="machine id must be 3 bytes, got 4"):
        Xid.from_parts(0, bytes(4), 0, 0)
    with pytest.raises(ValueError, match="unix second -1"):
        Xid.from_parts(-1, 0, 0, 0)
    with pytest.raises(ValueError, match="unix second 4294967296"):
        Xid.from_parts(1 << 32, 0, 0, 0)


def test_machine_id_is_md5_of_host_name():
    assert pg_idgen.machine_from_hostname("") == bytes.fromhex("d41d8c")
    assert XidGenerator().machine == hashlib.md5(socket.gethostname().encode()).digest()[:3]
    assert Xid.new().machine == hashlib.md5(socket.gethostname().encode()).digest()[:3]
    assert XidGenerator(0x010203).machine == b"\x01\x02\x03"
    assert XidGenerator(b"abc").new().machine == b"abc"


# --- Xid generator ---------------------------------------------------------------------

class Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def test_generator_fields():
    import os
    g = XidGenerator(0x0A0B0C, counter_start=41, clock=Clock(1_700_000_000.9))
    x = g.new()
    assert (x.unix_seconds, x.machine, x.pid, x.counter) == (1_700_000_000, b"\n\x0b\x0c", os.getpid() & 0xFFFF, 41)
    assert g.new().counter == 42


def test_counter_wrap_borrows_a_second():
    clock = Clock(100)
    g = XidGenerator(b"\x01\x02\x03", pid=42, counter_start=0xFFFFFF, clock=clock)
    seen = [(x.unix_seconds, x.counter) for x in (g.new(), g.new(), g.new())]
    assert seen == [(100, 0xFFFFFF), (101, 0), (101, 1)]  # the borrowed second is kept
    clock.now = 102
    assert (lambda x: (x.unix_seconds, x.counter))(g.new()) == (102, 2)


def test_clock_step_back_keeps_last_second():
    clock = Clock(500)
    g = XidGenerator(b"\x01\x02\x03", pid=42, counter_start=7, clock=clock)
    a = g.new()
    clock.now = 400
    b = g.new()
    assert (b.unix_seconds, b.counter) == (500, 8) and b > a


def test_lower_machine_borrows_a_second():
    g = XidGenerator(b"\x09\x09\x09", pid=42, counter_start=7, clock=Clock(500))
    a = g.new()
    g.set_machine(b"\x01\x02\x03")
    b = g.new()
    assert b > a and (b.unix_seconds, b.machine, b.counter) == (501, b"\x01\x02\x03", 8)


def test_end_of_time_is_an_error_not_a_wrap():
    last = 0xFFFFFFFF
    g = XidGenerator(pid=1, counter_start=5, clock=Clock(last))
    g.new()
    g._counter = 5  # the same counter again: it would need second 2^32
    with pytest.raises(ValueError, match="unix second 4294967296"):
        g.new()
    with pytest.raises(ValueError, match="unix second -5"):
        XidGenerator(clock=Clock(-5)).new()


def test_ids_strictly_increase_whatever_the_clock():
    rng = random.Random(3)
    clock = Clock(1_000_000)
    g = XidGenerator(b"\x01\x02\x03", pid=42, clock=clock)
    prev = None
    for _ in range(20000):
        clock.now += rng.choice((-3, -1, 0, 0, 0, 0, 1, 2))
        if rng.random() < 0.01:
            g._counter = rng.randrange(1 << 24)  # jump the counter: forces wraps
        if rng.random() < 0.002:
            g.set_machine(rng.randrange(1 << 24))
        x = g.new()
        assert prev is None or x > prev
        assert x.unix_seconds >= clock.now
        prev = x


def test_generator_is_thread_safe():
    g = XidGenerator(1, pid=7)
    per_thread = [[] for _ in range(8)]

    def run(k):
        out = per_thread[k]
        for _ in range(5000):
            out.append(g.new())

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [x for ids in per_thread for x in ids]
    assert len(set(everything)) == 40000
    for ids in per_thread:
        assert all(a < b for a, b in zip(ids, ids[1:]))


# --- Snowflake -------------------------------------------------------------------------

E = pg_idgen.DEFAULT_EPOCH_MS


class MsClock:
    def __init__(self, now):
        self.now = now
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += max(1, round(seconds * 1000))


def test_snowflake_layout_and_decoders():
    assert E == 1288834974657
    clock = MsClock(E + 1000)
    s = Snowflake(5, clock=clock, sleep=clock.sleep)
    first = s.next_id()
    assert first == 1000 * 4194304 + 5 * 4096  # 1000 ms, worker 5, sequence 0
    assert s.next_id() == first + 1
    assert pg_idgen.snowflake_parts(4194324487) == (1000, 5, 7)
    assert pg_idgen.snowflake_worker(4194324487) == 5
    assert pg_idgen.snowflake_sequence(4194324487) == 7
    assert pg_idgen.snowflake_unix_ms(4194324487) == E + 1000
    assert pg_idgen.snowflake_time(4194324487) == dt.datetime(2010, 11, 4, 1, 42, 55, 657000, tzinfo=UTC)
    assert s.time(first) == pg_idgen.snowflake_time(first)
    assert Snowflake(1, epoch_ms=0).time(4194304) == dt.datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)
    assert pg_idgen.snowflake_parts((1 << 63) - 1) == ((1 << 41) - 1, 1023, 4095)
    for bad in (-1, -4194304):
        for f in (pg_idgen.snowflake_parts, pg_idgen.snowflake_worker, pg_idgen.snowflake_sequence,
                  pg_idgen.snowflake_time):
            with pytest.raises(ValueError, match="negative"):
                f(bad)


def test_snowflake_argument_errors():
    for w in (-1, 1024):
        with pytest.raises(ValueError, match=f"worker id {w} is outside the range 0 .. 1023"):
            Snowflake(w)
    with pytest.raises(TypeError):
        Snowflake("1")
    with pytest.raises(ValueError, match="epoch"):
        Snowflake(1, epoch_ms=-1)
    clock = MsClock(E - 1)
    with pytest.raises(ValueError, match="before the snowflake epoch"):
        Snowflake(1, clock=clock).next_id()
    last_ok = E + (1 << 41) - 1
    s = Snowflake(7, clock=MsClock(last_ok))
    assert s.next_id() == (((1 << 41) - 1) << 22) | 7 << 12
    with pytest.raises(ValueError, match="does not fit in 41 bits"):
        Snowflake(7, clock=MsClock(last_ok + 1)).next_id()


def test_snowflake_waits_out_a_full_millisecond():
    clock = MsClock(E + 1_000_000)
    s = Snowflake(42, clock=clock, sleep=clock.sleep)
    ids = [s.next_id() for _ in range(4097)]
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert [pg_idgen.snowflake_sequence(i) for i in ids[:4096]] == list(range(4096))
    assert pg_idgen.snowflake_parts(ids[4096]) == (1_000_001, 42, 0)
    assert clock.slept == [0.001]


def test_snowflake_clock_step_back():
    clock = MsClock(E + 10_000)
    s = Snowflake(1, max_backward_ms=100, clock=clock, sleep=clock.sleep)
    a = s.next_id()
    clock.now -= 50  # within the bound: waits until the clock is back at a's millisecond
    b = s.next_id()
    assert b > a and pg_idgen.snowflake_parts(b).ms_since_epoch >= 10_000
    clock.now -= 500  # beyond: an error, never a duplicate
    with pytest.raises(SnowflakeClockError, match="moved back"):
        s.next_id()
    clock.now += 600
    assert s.next_id() > b


def test_snowflake_threads_never_duplicate():
    s = Snowflake(9)
    out = [[] for _ in range(4)]

    def run(k):
        for _ in range(5000):
            out[k].append(s.next_id())

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in out for i in ids]
    assert len(set(every)) == 20000
    assert all(pg_idgen.snowflake_worker(i) == 9 for i in every)
    for ids in out:
        assert all(a < b for a, b in zip(ids, ids[1:]))


# --- rapkey ----------------------------------------------------------------------------

VECTORS = ["ord.cn.sh.202407.8842-2", "usr.cn.10001-x", "pay.us.ca.acme.202406.3311-h",
           "ord.cn.sh.202407.58-~"]
SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyz.-~"


@pytest.mark.parametrize("key", VECTORS)
def test_spec_vectors(key):
    body, _, c = key.rpartition("-")
    assert rapkey.is_valid(key)
    assert rapkey.check_char(body) == c
    kind, *segments = body.split(".")
    assert rapkey.build(kind, *segments) == key
    assert rapkey.build(kind.upper(), *(f" {s.upper()} " for s in segments)) == key
    assert rapkey.parse(key) == (kind, segments, c)
    assert rapkey.normalize(f"  {key.upper()}\n") == key
    # Every single substitution and adjacent transposition is caught.
    for i in range(len(key)):
        for s in SYMBOLS:
            if s != key[i]:
                assert not rapkey.is_valid(key[:i] + s + key[i + 1:])
        if i + 1 < len(key) and key[i] != key[i + 1]:
            assert not rapkey.is_valid(key[:i] + key[i + 1] + key[i] + key[i + 2:])


@pytest.mark.parametrize("key, why", [
    ("", "Key is empty."),
    ("a" * 129, "Key is too long: 129 characters"),
    ("ord.cn", "Missing '-' before the check character."),
    ("ord.cn-", "Missing check character after '-'."),
    ("ord.cn-22", "Expected one check character after '-', found \"22\"."),
    ("ord.cn-A", "Check character 'A' is not one of [0-9a-z~]."),
    ("ord.cn.sh.202407.8842-3", "Wrong check character: expected '2', found '3'."),
    ("o.cn-2", "Type \"o\" is too short: 1 letter"),
    ("abcdefghi.cn-2", "Type \"abcdefghi\" is too long: 9 letters"),
    ("o1.cn-2", "Type \"o1\" has a character outside [a-z]: '1' at position 2."),
    ("ORD.cn-2", "Type \"ORD\" has a character outside [a-z]: 'O' at position 1."),
    ("ord-2", "Type \"ord\" must be followed by at least one segment."),
    ("a1.a.b.c.d.e.f-2", "outside [a-z]"),
    ("ab.a.b.c.d.e.f-2", "Too many segments: 6 (at most 5)."),
    ("ord..a-2", "Segment 1 is empty."),
    ("ord." + "a" * 33 + "-2", "Segment 1 \"aaaa"),
    ("ord.a!-2", "Segment 1 \"a!\" has a character outside [a-z0-9]: '!' at position 2."),
    ("ord.cn-2~x", "Expected one check character after '-', found \"2~x\"."),
])
def test_rapkey_errors_say_why(key, why):
    with pytest.raises(ValueError) as e:
        rapkey.validate(key)
    assert why in str(e.value)
    assert str(e.value).startswith("invalid input syntax for type rapkey: ")
    assert e.value.checksum == why.startswith("Wrong check character")
    assert not rapkey.is_valid(key)


def test_rapkey_build_check_char_and_prefix_errors():
    with pytest.raises(ValueError, match="invalid rapkey part: Segment 2 \"Sh!\" has a character"):
        rapkey.build("ord", "cn", "Sh!")
    with pytest.raises(ValueError, match="Type is empty"):
        rapkey.build(" ", "x")
    with pytest.raises(ValueError, match="must be followed by at least one segment"):
        rapkey.build("ord")
    with pytest.raises(ValueError, match="Too many segments: 6"):
        rapkey.build("ord", "a", "b", "c", "d", "e", "f")
    with pytest.raises(ValueError, match="Segment 2 is empty"):
        rapkey.build("ord", "a", " ")
    with pytest.raises(ValueError, match="Segment 1 \"cn.sh\" has a character outside"):
        rapkey.build("ord", "cn.sh")
    with pytest.raises(ValueError, match="Body is too long: 133"):
        rapkey.build("ord", *(["a" * 25] * 5))
    with pytest.raises(ValueError, match="invalid rapkey body: Segment 2 \"cn-2\" has a character"):
        rapkey.check_char("ord.sh.cn-2")
    with pytest.raises(ValueError):
        rapkey.check_char("ORD.cn")
    with pytest.raises(ValueError, match="Body is too long: 200"):
        rapkey.check_char("a" * 200)
    for bad in (None, 5, b"ord.cn-2"):
        assert rapkey.is_valid(bad) is False


def test_prefix_range_is_exact():
    r = rapkey.prefix_range("ord.cn.sh.202407")
    assert r == ("ord.cn.sh.202407-", "ord.cn.sh.202407/")
    assert rapkey.prefix_range(" ORD.CN.SH.202407 ") == r

    def key_of(body):
        return f"{body}-{rapkey.check_char(body)}"

    under = ["ord.cn.sh.202407", "ord.cn.sh.202407.0", "ord.cn.sh.202407.8842",
             "ord.cn.sh.202407.zzzz", "ord.cn.sh.202407.z.zzzzzzzz"]
    not_under = ["ord.cn.sh.2024071", "ord.cn.sh.2024071.1", "ord.cn.sh.202407a.1",
                 "ord.cn.sh.20240.7", "ord.cn.sh.202408", "ord.cn.sh", "ord.cn.sh0.202407.1",
                 "orda.cn.sh.202407.1", "or.cn.sh.202407.1", "usr.cn.sh.202407.1"]
    for b in under:
        assert r[0] <= key_of(b) < r[1], b
    for b in not_under:
        assert not r[0] <= key_of(b) < r[1], b
    assert rapkey.prefix_range("ord") == ("ord-", "ord/")
    for bad in ("ord.", "ord.cn.sh.202407.8842-2", "ord..cn", "", "o", "ord.a.b.c.d.e.f"):
        with pytest.raises(ValueError):
            rapkey.prefix_range(bad)
    assert rapkey.prefix_range("ord.a.b.c.d.e")


def test_rapkey_random_keys_agree_with_check_char():
    rng = random.Random(11)
    for _ in range(3000):
        kind = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 8)))
        segs = ["".join(rng.choice("abcz019") for _ in range(rng.randint(1, 6)))
                for _ in range(rng.randint(1, 5))]
        body = ".".join([kind] + segs)
        c = rapkey.check_char(body)
        assert rapkey.is_valid(f"{body}-{c}")
        wrong = rng.choice([x for x in rapkey.CHECK_ALPHABET if x != c])
        with pytest.raises(ValueError, match=f"expected '{c}'"):
            rapkey.validate(f"{body}-{wrong}")


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_forked_child_uses_its_own_pid():
    import os
    parent = Xid.new()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one id, its bytes to the parent
        try:
            os.write(w, bytes(Xid.new()))
        finally:
            os._exit(0)
    os.close(w)
    child = Xid(os.read(r, 12))
    os.waitpid(pid, 0)
    assert parent.pid == os.getpid() & 0xFFFF
    assert child.pid == pid & 0xFFFF and child.machine == parent.machine
