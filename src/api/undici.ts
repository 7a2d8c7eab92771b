/**
 * The parts of undici leadctl uses, imported file by file: undici's index loads every part it has
 * (fetch, WebSocket, EventSource, mocks, caches, HTTP/2 for them), 146 ms at every start of a
 * command that talks to the service, against 63 ms for these (measured with Node 24, unbundled).
 * Only this file imports undici's code; the rest imports its types from 'undici'.
 */
import type * as Undici from 'undici';
import api from 'undici/lib/api/index.js';
import undiciErrors from 'undici/lib/core/errors.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js';
import ProxyAgentClass from 'undici/lib/dispatcher/proxy-agent.js';

// What undici's index does: every dispatcher gets request, connect… (ProxyAgent connects through it).
Object.assign(DispatcherClass.prototype, api);

export const Agent: typeof Undici.Agent = AgentClass;
export const ProxyAgent: typeof Undici.ProxyAgent = ProxyAgentClass;
export const errors: typeof Undici.errors = undiciErrors;

export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Undici.Dispatcher.HttpMethod;
  dispatcher: Undici.Dispatcher;
};

/** undici's `request(url, options)` on `options.dispatcher`, the URL split as undici's index splits it. */
export function request(url: string | URL, options: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return dispatcher.request({
    ...rest,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: rest.method ?? (rest.body ? 'PUT' : 'GET'),
  });
}
