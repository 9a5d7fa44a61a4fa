"""The build pipeline (docs/architecture.md, docs/bench-format.md): sources -> cases -> items -> variants ->
bench folder."""

from medr2._callable_module import make_callable  # noqa: E402

make_callable(__name__)  # ``medr2.build(...)`` is the API verb even once this package is imported
