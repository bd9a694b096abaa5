/** The console's build (console/build.mjs runs it): hashed files under assets/, served at /console/. */
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [preact()],
  build: {
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline data: URLs and no module-preload polyfill: the CSP allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
