import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';

// Served by the engine at /ui/ (assets embedded in the binary); `npm run dev` proxies the
// admin API to a running MetaClaw on the default port.
export default defineConfig({
  base: '/ui/',
  plugins: [svelte(), svelteTesting()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:30000' },
  },
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts'],
  },
});
