"""pg_idgen.django: an xid12 primary key made by the database, through migrate and the ORM."""
import io
import os

import pytest

from servers import connect, fresh_database

DB = "pyclient_django"


@pytest.fixture(scope="module")
def django_db():
    import django
    from django.conf import settings

    fresh_database(DB)  # no extension: the migration creates it
    if not settings.configured:
        settings.configure(
            DATABASES={"default": {
                "ENGINE": "django.db.backends.postgresql", "NAME": DB, "USER": "postgres",
                "HOST": os.environ["PG_IDGEN_HOST"], "PORT": os.environ["PG_IDGEN_PORT"],
            }},
            INSTALLED_APPS=["pyclient_django_app"],
            USE_TZ=True,
            DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        )
        django.setup()
    from django.core.management import call_command

    call_command("migrate", "pyclient_django_app", verbosity=0)
    yield
    from django.db import connections
    connections.close_all()


def test_migrate_creates_the_extension_and_the_default(django_db):
    with connect(dbname=DB) as conn:
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pg_idgen'").fetchone()[0] == 1
        row = conn.execute("""SELECT format_type(atttypid, atttypmod), pg_get_expr(adbin, adrelid)
                              FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
                              WHERE attrelid = 'pyclient_django_app_order'::regclass AND attname = 'id'""").fetchone()
        assert row == ("xid12", "gen_xid12()")
    # The models and the migration agree: nothing new to migrate.
    from django.core.management import call_command
    out = io.StringIO()
    call_command("makemigrations", "pyclient_django_app", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_create_get_filter(django_db):
    from pyclient_django_app.models import Line, Order

    from pg_idgen import Xid

    orders = [Order.objects.create(note=f"n{i}") for i in range(6)]
    assert all(isinstance(o.id, Xid) for o in orders)
    ids = [o.id for o in orders]
    assert ids == sorted(ids) and len(set(ids)) == 6
    assert Order.objects.get(id=ids[2]).note == "n2"
    assert Order.objects.get(pk=str(ids[3])).note == "n3"
    assert [o.note for o in Order.objects.filter(id__gt=ids[3]).order_by("id")] == ["n4", "n5"]
    assert [o.note for o in Order.objects.filter(id__gte=str(ids[4])).order_by("id")] == ["n4", "n5"]
    assert sorted(o.note for o in Order.objects.filter(id__in=[ids[0], str(ids[5])])) == ["n0", "n5"]
    fetched = Order.objects.get(id=ids[1])
    assert isinstance(fetched.id, Xid) and fetched.id == ids[1]
    line = Line.objects.create(order=orders[0], sku="x")
    assert isinstance(line.id, Xid) and Line.objects.get(order_id=ids[0]).id == line.id
    assert list(Order.objects.filter(lines__sku="x")) == [orders[0]]
    fixed = Xid("9m4e2mr0ui3e8a215n4g")
    Order.objects.create(id=fixed, note="given")
    assert Order.objects.get(id="9M4E2MR0UI3E8A215N4G").note == "given"
    with pytest.raises(ValueError, match="last character must be 0 or g"):
        Order.objects.get(id="00000000000000000001")
    o = Order.objects.get(id=fixed)
    o.note = "changed"
    o.save()
    assert Order.objects.get(id=fixed).note == "changed"
    assert Order.objects.count() == 7
