// oidc-provider ships no types (and @types/oidc-provider is not installed); the tests use a small part of it.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
}
