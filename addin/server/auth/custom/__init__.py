"""xlwings Server's ``custom`` auth provider, with Compute Lab's sign-in tokens.

xlwings Server imports ``auth.custom`` from the project directory (``XLWINGS_PROJECT_DIR``)
when ``XLWINGS_AUTH_PROVIDERS=["custom"]`` (``compute-lab serve --require-sign-in`` sets it)
and awaits :func:`validate_token` with the ``Authorization`` header that the add-in's
``getAuth()`` (``static/js/auth.js``) sends: ``Bearer <token>``. Tokens are those of
``compute-lab serve token create``; see :mod:`addin.tokens`. Unlike xlwings Server's example
provider, nothing is cached: a revoked token is refused at its next call.
"""

from fastapi import HTTPException, status
from xlwings_server.models import User

from addin import team, tokens

_STORE = None


def _store():
    global _STORE
    if _STORE is None:
        _STORE = tokens.TokenStore(team.config_from_env().token_file)
    return _STORE


async def validate_token(token_string: str):
    """The signed-in :class:`User` (id and name: the token's name; roles: its role) or 401."""
    name, role = _store().check(token_string)
    if name is None:
        raise HTTPException(status_code=status.HTTP_401_UNAUTHORIZED, detail=role)
    return User(id=name, name=name, roles=[role])
