"""A Django app for tests/client/test_pyclient_django.py."""
from django.db import models

from pg_idgen.django import Xid12Field


class Order(models.Model):
    id = Xid12Field(primary_key=True)
    note = models.TextField()

    class Meta:
        app_label = "pyclient_django_app"


class Line(models.Model):
    id = Xid12Field(primary_key=True)
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    sku = models.TextField()

    class Meta:
        app_label = "pyclient_django_app"
