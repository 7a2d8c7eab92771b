// Types for the undici files src/api/undici.ts imports one by one (the package types only its index).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import type { ProxyAgent } from 'undici';
  const ProxyAgentClass: typeof ProxyAgent;
  export default ProxyAgentClass;
}
declare module 'undici/lib/core/errors.js' {
  import type { errors } from 'undici';
  const undiciErrors: typeof errors;
  export default undiciErrors;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type { Dispatcher } from 'undici';
  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}
declare module 'undici/lib/api/index.js' {
  /** request, stream, pipeline, upgrade and connect, as undici's index puts them on Dispatcher.prototype. */
  const api: Record<string, (...args: never[]) => unknown>;
  export default api;
}
