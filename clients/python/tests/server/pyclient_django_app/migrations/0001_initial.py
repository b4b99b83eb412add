import django.db.models.deletion
from django.db import migrations, models

import pg_idgen.django


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        pg_idgen.django.CreatePgIdgenExtension(),
        migrations.CreateModel(
            name="Order",
            fields=[
                ("id", pg_idgen.django.Xid12Field(db_default=pg_idgen.django.GenXid12(), primary_key=True, serialize=False)),
                ("note", models.TextField()),
            ],
        ),
        migrations.CreateModel(
            name="Line",
            fields=[
                ("id", pg_idgen.django.Xid12Field(db_default=pg_idgen.django.GenXid12(), primary_key=True, serialize=False)),
                ("sku", models.TextField()),
                ("order", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="lines", to="pyclient_django_app.order")),
            ],
        ),
    ]
