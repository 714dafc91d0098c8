// The HTTP API of `shiyi serve`, with the bearer token (if the server has one) kept in
// this tab's sessionStorage. A 401 asks for the token and retries once.

const TOKEN_KEY = "shiyi.token";
let askToken = null;
let asking = null; // one question at a time, however many requests were refused

export function onTokenNeeded(handler) {
  askToken = handler;
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function hasToken() {
  return Boolean(sessionStorage.getItem(TOKEN_KEY));
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// `raw` (a File or Blob) is sent as the body itself: an upload's bytes.
export async function api(method, path, { params, body, raw, retried = false } = {}) {
  const headers = { accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (raw !== undefined) headers["content-type"] = "application/octet-stream";
  const response = await fetch(path + query(params), {
    method,
    headers,
    body: raw !== undefined ? raw : body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401 && !retried && askToken) {
    asking = asking || askToken().finally(() => (asking = null));
    if (await asking) return api(method, path, { params, body, raw, retried: true });
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code || "error", error.message || response.statusText);
  }
  return data;
}

export const Memory = {
  overview: () => api("GET", "/v1/memory/overview"),
  add: (body) => api("POST", "/v1/memory", { body }),
  facts: (params) => api("GET", "/v1/memory/facts", { params }),
  search: (q, params) => api("GET", "/v1/memory/search", { params: { q, ...params } }),
  patch: (id, body) => api("PATCH", `/v1/memory/${encodeURIComponent(id)}`, { body }),
  remove: (id) => api("DELETE", `/v1/memory/${encodeURIComponent(id)}`),
  expired: () => api("GET", "/v1/memory/expired"),
  cleanup: (ids) => api("POST", "/v1/memory/expired/cleanup", { body: { ids } }),
  conflicts: () => api("GET", "/v1/memory/conflicts"),
  resolve: (id, keep) =>
    api("POST", `/v1/memory/conflicts/${encodeURIComponent(id)}/resolve`, { body: { keep } }),
  entity: (name) => api("GET", `/v1/memory/entities/${encodeURIComponent(name)}`),
  sessions: () => api("GET", "/v1/sessions", { params: { limit: 200 } }),
  timeline: (id) => api("GET", `/v1/memory/sessions/${encodeURIComponent(id)}/timeline`),
};
