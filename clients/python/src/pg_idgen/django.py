"""Django model field for xid12, and a migration operation that creates the extension.

    from pg_idgen.django import Xid12Field, CreatePgIdgenExtension

    class Order(models.Model):
        id = Xid12Field(primary_key=True)   # the database makes it: DEFAULT gen_xid12()

    # in the first migration, before the models that use xid12:
    operations = [CreatePgIdgenExtension(), migrations.CreateModel(...)]

Values are :class:`pg_idgen.Xid`; lookups (``get``, ``filter(id__gt=...)``, ``id__in``) take
an ``Xid`` or its text.
"""
from __future__ import annotations

from django.core import exceptions
from django.db import models
from django.db.migrations.operations.base import Operation

from ._xid import Xid, coerce

__all__ = ["Xid12Field", "GenXid12", "CreatePgIdgenExtension"]


class GenXid12(models.Func):
    """SQL ``gen_xid12()``, as a database default."""

    function = "gen_xid12"
    template = "%(function)s()"
    arity = 0

    def __init__(self, **extra):
        super().__init__(output_field=Xid12Field(), **extra)


class Xid12Field(models.Field):
    description = "An xid12 id (pg_idgen)"
    empty_strings_allowed = False

    def __init__(self, *args, **kwargs):
        if kwargs.get("primary_key") and "default" not in kwargs and "db_default" not in kwargs:
            kwargs["db_default"] = GenXid12()
        super().__init__(*args, **kwargs)

    @property
    def db_returning(self):
        # A value the database makes comes back with the INSERT (RETURNING).
        return self.has_db_default()

    def db_type(self, connection):
        return "xid12"

    def get_internal_type(self):
        return "Xid12Field"

    def from_db_value(self, value, expression, connection):
        if value is None or value.__class__ is Xid:
            return value
        return coerce(value)

    def to_python(self, value):
        if value is None or value.__class__ is Xid:
            return value
        try:
            return coerce(value)
        except (TypeError, ValueError) as e:
            raise exceptions.ValidationError(str(e), code="invalid", params={"value": value})

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or isinstance(value, models.expressions.Expression):
            return value
        return str(value if value.__class__ is Xid else coerce(value))

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return None if value is None else str(value)


class CreatePgIdgenExtension(Operation):
    """``CREATE EXTENSION IF NOT EXISTS pg_idgen`` (backwards: ``DROP EXTENSION IF EXISTS``,
    which fails while columns still use its types)."""

    reversible = True

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute("DROP EXTENSION IF EXISTS pg_idgen")

    def describe(self):
        return "Creates the pg_idgen extension"

    @property
    def migration_name_fragment(self):
        return "create_extension_pg_idgen"
