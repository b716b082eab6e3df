// Builds the /mobile PWA into dist/mobile: bundles the page (xterm.js from npm included, no CDN),
// its login script and service worker with esbuild, type-checks them, and writes the manifest and
// PNG icons (drawn here, so the repository holds no binary). Run by `npm run build` after tsc.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'web', 'mobile');
const out = join(root, 'dist', 'mobile');
const require = createRequire(import.meta.url);

// The page's own strict type check (DOM types, not the server's Node ones).
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'web', 'tsconfig.json')], { stdio: 'inherit' });

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const common = { bundle: true, minify: true, target: ['chrome100', 'safari15', 'firefox100'], legalComments: 'none', logLevel: 'warning' };
await build({ ...common, entryPoints: { app: join(src, 'app.ts'), login: join(src, 'login.ts') }, outdir: out, format: 'iife' });
await build({ ...common, entryPoints: { sw: join(src, 'sw.ts') }, outdir: out, format: 'iife' });
for (const f of ['index.html', 'login.html']) copyFileSync(join(src, f), join(out, f));

writeFileSync(
  join(out, 'manifest.webmanifest'),
  JSON.stringify(
    {
      name: 'tuicd',
      short_name: 'tuicd',
      description: 'Watch and answer your terminal sessions and coding agents',
      id: '/mobile',
      start_url: '/mobile',
      scope: '/mobile',
      display: 'standalone',
      background_color: '#0d1117',
      theme_color: '#0b5cad',
      icons: [
        { src: '/mobile/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
        { src: '/mobile/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any maskable' },
      ],
    },
    null,
    2,
  ),
);
for (const size of [192, 512]) writeFileSync(join(out, `icon-${size}.png`), icon(size));

/** A prompt glyph (`>_`) in white on the accent colour, full bleed so it also serves as a maskable icon. */
function icon(size) {
  const px = Buffer.alloc(size * size * 4);
  const u = size / 16;
  const inChevron = (x, y) => {
    // Two thick strokes from (4,4) to (8,8) and back to (4,12), in 16ths of the icon.
    const d = (ax, ay, bx, by) => {
      const t = Math.max(0, Math.min(1, ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)));
      return Math.hypot(x - (ax + t * (bx - ax)), y - (ay + t * (by - ay)));
    };
    return Math.min(d(4.5, 4.5, 8, 8), d(8, 8, 4.5, 11.5)) < 0.8;
  };
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const fx = x / u;
      const fy = y / u;
      const white = inChevron(fx, fy) || (fx >= 9 && fx <= 12.5 && fy >= 10.7 && fy <= 12.1);
      const i = (y * size + x) * 4;
      px[i] = white ? 255 : 11;
      px[i + 1] = white ? 255 : 92;
      px[i + 2] = white ? 255 : 173;
      px[i + 3] = 255;
    }
  }
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) px.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.writeUInt8(8, 8);
  ihdr.writeUInt8(6, 9);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
