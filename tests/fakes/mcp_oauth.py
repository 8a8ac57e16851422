"""An in-memory OAuth authorization server for the fake MCP server over HTTP.

It plays the part of a server that asks the client to sign in: dynamic client
registration, ``/authorize`` answering at once with a redirect to the client's
callback (no login page: the "user" always agrees), PKCE-checked code exchange
(the SDK's token handler checks the verifier), bearer tokens. The SDK's own
``MCPServer`` auth routes serve it; this class only keeps the state.
"""

from __future__ import annotations

import secrets
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class FakeOAuthProvider:
    """Every sign-in is granted; ``authorized`` counts the ``/authorize`` visits."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}
        self.authorized = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        self.authorized += 1
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        token = secrets.token_urlsafe(24)
        self.tokens[token] = AccessToken(token=token, client_id=client.client_id or "",
                                         scopes=authorization_code.scopes,
                                         expires_at=int(time.time()) + 3600,
                                         resource=authorization_code.resource)
        return OAuthToken(access_token=token, expires_in=3600)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, client, refresh_token, scopes):  # noqa: ANN001, ANN201
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token) -> None:  # noqa: ANN001
        self.tokens.pop(getattr(token, "token", ""), None)
