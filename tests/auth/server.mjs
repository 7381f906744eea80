// The OAuth 2.1 authorization server the tests start on loopback: oidc-provider (OpenID
// Certified), configured here for what `serve --http` must accept and refuse. What it is
// and how it is configured: tests/auth/README.md. Started by tests/support/authz.rs.
//
//   node server.mjs --scopes "vidgen:read vidgen:change vidgen:spend" \
//     [--clients clients.json] [--access-token-ttl SECONDS] \
//     [--login SUBJECT] [--default-resource URL] [--journal FILE]
//
// Takes: the scopes every resource server allows; the static clients (a JSON array of
// { client_id, client_secret, scope? }: confidential, client_secret_basic, grant
// client_credentials, or with "grant_types": [] a resource server that only introspects;
// with "redirect_uris" an authorization-code client instead, a provider's registration
// of `serve`: grants authorization_code and refresh_token, confidential with a
// client_secret, public without). With --login, every login and consent page completes
// by itself for that account, so a test follows redirects with plain HTTP; with
// --default-resource, an authorization request that names no resource is for that one
// (a provider's API, whose clients do not send RFC 8707 indicators); with --journal, every
// token answer of the authorization-code and refresh grants is appended to FILE, one JSON
// line each, so a test of `serve` as this server's client knows every token serve was
// given (to find it in the calls serve makes, and nowhere in what serve writes).
// Returns: one JSON line on stdout once listening, {"issuer": "http://127.0.0.1:<port>"};
// everything else goes to stderr. Access tokens are ES256 JWTs; the token endpoint with
// the query `?format=opaque` issues opaque ones (for introspection and revocation).
// Must never: listen on anything but 127.0.0.1, use a key or secret that outlives the
// process, or outlive its parent (it exits when its stdin closes, which the kernel does
// however the parent ends).

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    scopes: { type: 'string' },
    clients: { type: 'string' },
    'access-token-ttl': { type: 'string', default: '600' },
    login: { type: 'string' },
    'default-resource': { type: 'string' },
    journal: { type: 'string' },
  },
  strict: true,
});

const fail = (message) => {
  process.stderr.write(`tests/auth/server.mjs: ${message}\n`);
  process.exit(2);
};

if (!args.scopes?.trim()) fail('--scopes "a b c" is required: the scopes the resource servers allow');
const allowed = args.scopes.trim().split(/\s+/);
const ttl = Number(args['access-token-ttl']);
if (!Number.isInteger(ttl) || ttl <= 0) fail('--access-token-ttl must be a positive whole number of seconds');

// A resource indicator is accepted only as a plain http URL on loopback, so a test can
// name any port it listens on (or none: `http://127.0.0.1:9/mcp`) without a list, and a
// typo for another host is an invalid_target, not a token for it.
const onLoopback = (resource) => {
  const url = URL.parse(resource);
  return url !== null && url.protocol === 'http:' && url.username === '' && url.password === ''
    && (url.hostname === '127.0.0.1' || url.hostname === 'localhost') && url.hash === '';
};

if (args.login !== undefined && !args.login.trim()) fail('--login needs the subject every login signs in as');
if (args['default-resource'] !== undefined && !onLoopback(args['default-resource'])) {
  fail('--default-resource must be an http://127.0.0.1:… or http://localhost:… URL');
}

const statics = args.clients ? JSON.parse(readFileSync(args.clients, 'utf8')) : [];
const codeClient = ({ redirect_uris: uris }) => Array.isArray(uris) && uris.length > 0;
const clients = statics.map(({ client_id, client_secret, scope, grant_types, redirect_uris }) => (
  codeClient({ redirect_uris })
    // A provider's registration of `serve`: the authorization-code flow and refresh. With
    // a secret, confidential (client_secret_basic); without one, public (client_id in the
    // body), which oidc-provider holds to PKCE and to refresh-token rotation.
    ? {
      client_id,
      ...(client_secret === undefined
        ? { token_endpoint_auth_method: 'none' }
        : { client_secret, token_endpoint_auth_method: 'client_secret_basic' }),
      grant_types: grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris,
      ...(scope === undefined ? {} : { scope }),
    }
    : {
      client_id,
      client_secret,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: grant_types ?? ['client_credentials'],
      // Client-credentials and introspection-only clients never use the authorization
      // endpoint (oidc-provider's docs: "Client Credentials only clients").
      response_types: [],
      redirect_uris: [],
      ...(scope === undefined ? {} : { scope }),
    }
));
const codeClients = new Set(statics.filter(codeClient).map(({ client_id }) => client_id));

// Keys made at start and never written anywhere: a token of one run means nothing to the
// next. EC P-256 signs the access tokens (ES256); RSA signs ID tokens, whose default
// algorithm (RS256) a client registered later in an authorization-code test will expect.
const jwk = (type, options, kid) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
  kid,
  use: 'sig',
});
const jwks = {
  keys: [
    jwk('ec', { namedCurve: 'P-256' }, `es256-${randomBytes(6).toString('hex')}`),
    jwk('rsa', { modulusLength: 2048 }, `rs256-${randomBytes(6).toString('hex')}`),
  ],
};


// oidc-provider narrows a token's scope to the resource server's silently; the tests need
// a scope the server does not allow to be refused (RFC 6749 §5.2 invalid_scope), as a
// real server's policy would, so the check is made here, where the resource is known.
const oidcScopes = new Set(['openid', 'offline_access']);
const refuseUnknownScopes = (ctx) => {
  const requested = ctx.oidc.params.scope;
  if (typeof requested !== 'string') return;
  const unknown = requested.split(' ').filter((s) => s && !allowed.includes(s) && !oidcScopes.has(s));
  if (unknown.length) throw new errors.InvalidScope('requested scope is not allowed', unknown.join(' '));
};

const listener = createServer();
await new Promise((resolve, reject) => {
  listener.once('error', reject);
  listener.listen(0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${listener.address().port}`;

const provider = new Provider(issuer, {
  clients,
  jwks,
  // Listing the resource scopes as the provider's own makes a static client's `scope`
  // an allow-list for them (a client limited to `x:read` is refused `x:spend`).
  scopes: [...oidcScopes, ...allowed],
  // A client that registers itself is not held to the scope it registered with: the MCP
  // TypeScript SDK registers with the scope of its first request (the 401's least scope)
  // and later steps up past it (403 insufficient_scope), which oidc-provider would refuse
  // with invalid_scope were `scope` an allow-list. What it asked for is kept as
  // `requested_scope`; the resource server's scopes and the person's consent are the
  // limit. Static clients (no request context) keep their allow-list.
  extraClientMetadata: {
    properties: ['requested_scope'],
    validator(ctx, key, _value, metadata) {
      if (ctx === undefined || key !== 'requested_scope' || metadata.scope === undefined) return;
      metadata.requested_scope = metadata.scope;
      delete metadata.scope;
    },
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // A provider's registration of `serve` gets a refresh token with every code, as the
  // providers whose APIs it calls do, without asking for `offline_access` (which
  // oidc-provider honours only with `prompt=consent`). A client that registers itself
  // keeps oidc-provider's rule.
  async issueRefreshToken(_ctx, client, code) {
    return client.grantTypeAllowed('refresh_token')
      && (codeClients.has(client.clientId) || code.scopes.has('offline_access'));
  },
  // Every authorization-code request carries a code challenge (OAuth 2.1; the MCP
  // authorization profile requires S256).
  pkce: { required: () => true },
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    // Any username and password at the login page: a headless test's person.
    devInteractions: { enabled: true },
    // Open registration, as an MCP client expects of an authorization server it found
    // through a 401; PKCE is required of the clients it registers too.
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // An authorization-code token is for the resource the client asked for at the
      // authorization endpoint, without naming it again at the token endpoint.
      useGrantedResource: () => true,
      // With --default-resource, a request that names no resource is for that one: the
      // provider's API, whose scopes its clients ask for by name alone. An exchange or a
      // refresh picks among the granted ones as oidc-provider does by default.
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? args['default-resource'],
      getResourceServerInfo: (ctx, resource) => {
        if (!onLoopback(resource)) {
          throw new errors.InvalidTarget('only http://127.0.0.1:… and http://localhost:… resources are served here');
        }
        refuseUnknownScopes(ctx);
        // Which format is the caller's choice, by the token endpoint's own query (RFC
        // 6749 §3.2 lets an endpoint URL carry one): the same person and resource can
        // hold a JWT and an opaque token, so a test of introspection needs no second
        // resource server, and the body's parameters stay the standard ones.
        if (ctx.query.format === 'opaque') {
          return { scope: allowed.join(' '), audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
        }
        return {
          scope: allowed.join(' '),
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
});

// Errors are answered to the client as OAuth errors; stderr shows them to whoever reads
// the test's output after a failure.
provider.on('server_error', (_ctx, error) => process.stderr.write(`server_error: ${error.stack}\n`));
const callback = provider.callback();

// The journal: written when the grant succeeds, before the answer leaves, so a client
// that holds a token finds it in the file already.
if (args.journal !== undefined) {
  provider.on('grant.success', (ctx) => {
    const grant = ctx.oidc.params.grant_type;
    if (grant !== 'authorization_code' && grant !== 'refresh_token') return;
    const { access_token, refresh_token, expires_in } = ctx.body;
    const line = { grant_type: grant, client_id: ctx.oidc.client.clientId, access_token, refresh_token, expires_in };
    appendFileSync(args.journal, `${JSON.stringify(line)}\n`);
  });
}

// With --login, the interaction page does what a person at oidc-provider's development
// login and consent forms would: signs in as that account, then grants every scope asked
// for (devInteractions' own submit, without the HTML). Each answer is oidc-provider's
// redirect back to the authorization endpoint, so a test only follows redirects.
const interactionPage = /^\/interaction\/[^/]+$/;
const interact = async (req, res) => {
  const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: args.login } }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name !== 'consent') throw new Error(`no automatic answer to the ${prompt.name} prompt`);
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const { details } = prompt;
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
};

listener.on('request', (req, res) => {
  const { pathname } = new URL(req.url, issuer);
  if (args.login === undefined || req.method !== 'GET' || !interactionPage.test(pathname)) {
    callback(req, res);
    return;
  }
  interact(req, res).catch((error) => {
    process.stderr.write(`--login interaction: ${error.stack}\n`);
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  });
});

// The parent holds our stdin: when it ends, however it ends, so do we.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
