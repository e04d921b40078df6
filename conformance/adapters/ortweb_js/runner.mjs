// The JavaScript side of conformance's onnxruntime-web targets: one long-lived
// process per worker, fed one request per line on stdin, answering one JSON
// line per request on stdout (conformance/adapters/ortweb.py is the other side).
//
//   node runner.mjs MODULES BACKEND [CHROMIUM]
//
// MODULES: the node_modules folder `npm ci` filled from this folder's lockfile;
// BACKEND: wasm (onnxruntime-web's WebAssembly backend, run here, by Node) or
// webgpu (its WebGPU backend, run in headless Chromium at CHROMIUM, which this
// process starts once and drives through puppeteer-core, on a page served on
// 127.0.0.1 only). The same handler (handler.mjs) answers in both places.
//
// Requests: {"op": "info"} | {"op": "load", "model": b64} |
// {"op": "run", "session": id, "feeds": {name: tensor}} | {"op": "release", "sessions": [id]};
// a tensor is {"type", "dims", "data": b64 of its little-endian bytes} or
// {"type": "string", "dims", "strings": [...]}. Answers: {"ok": true, ...} or
// {"ok": false, "stage": "load"|"run"|"harness", "error": message}.
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { mkdtemp, readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [modules, backend, chromium] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(modules, 'conformance-ortweb.cjs'));
const { makeHandler } = await import(pathToFileURL(path.join(here, 'handler.mjs')).href);

// Chromium's software WebGPU adapter (SwiftShader's Vulkan) on a machine
// without a GPU, or the machine's own where there is one: docs/browser.md.
const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',  // the worker's sandbox is its process (and CI runs as root)
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-angle=swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--disable-gpu-sandbox',
  '--no-first-run',
  '--disable-extensions',
];

const TYPES = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.html': 'text/html' };

// Serves this folder's page and onnxruntime-web's dist folder, on the loopback only.
async function serve(dist) {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url, 'http://127.0.0.1');
    const file = url.pathname.startsWith('/ort/')
      ? path.join(dist, path.basename(url.pathname))
      : path.join(here, path.basename(url.pathname) || 'page.html');
    try {
      const body = await readFile(file);
      response.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
      });
      response.end(body);
    } catch {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

// Chromium started here, not by puppeteer.launch (which starts it in a session
// of its own): in this process's group, which the worker's sentinel kills
// whole when the worker dies or hangs, so that no browser outlives its worker.
// The browser this runner started, killed whenever the runner exits (its stdin
// closed, an error, a crash of the page): a runner that ends without a worker's
// group kill (an adapter used in process, a worker closed cleanly) left it running.
let chromiumChild = null;
process.on('exit', () => {
  if (chromiumChild && chromiumChild.exitCode === null && chromiumChild.signalCode === null) {
    chromiumChild.kill('SIGKILL');
  }
});

async function startChromium() {
  const child = chromiumChild = spawn(chromium, [...CHROMIUM_FLAGS, '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0', `--user-data-dir=${await mkdtemp(path.join(tmpdir(), 'ortweb-'))}`,
    'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.on('exit', (code, signal) => {
    process.stderr.write(`chromium ended (${signal || `exit status ${code}`})\n`);
    process.exit(70);
  });
  const endpoint = await new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (found) resolve(found[1]);
    });
    child.on('error', reject);
  });
  child.stderr.resume();
  return endpoint;
}

// A run error after which the page's runtime is unusable (see inBrowser):
// WebAssembly's abort(), a failed wait on WebGPU's queue, and a WebGPU call that
// threw inside a run (createBindGroup of a zero-size buffer), after which a later
// run of the page can wait for ever (seen in every corpus run: docs/browser.md).
const BROKEN = /Aborted\(|Failed to wait for the operation|Failed to execute '\w+' on 'GPU/;

async function inBrowser() {
  const puppeteer = require('puppeteer-core');
  const dist = path.dirname(require.resolve('onnxruntime-web/webgpu'));
  const server = await serve(dist);
  const browser = await puppeteer.connect({ browserWSEndpoint: await startChromium() });
  // The browser gone (killed, crashed): this process goes too, so that its
  // worker sees it die and the case it ran is recorded as a crash.
  browser.on('disconnected', () => process.exit(70));
  const address = `http://127.0.0.1:${server.address().port}/page.html`;
  let warm = null;
  // A page with its own onnxruntime-web and WebGPU device, ready (and warmed,
  // once the probe is known) to answer.
  const fresh = async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(0);  // the worker's job timeout bounds every wait
    page.on('pageerror', (error) => process.stderr.write(`page error: ${error}\n`));
    page.on('crash', () => { if (page === current) process.exit(71); });
    await open(page, address);
    if (warm) await page.evaluate((r) => window.conformanceHandle(r), warm);
    return page;
  };
  let current = null;
  current = await fresh();
  // The page that takes over when the current one breaks, made while cases run
  // (after the first break: a run without one makes none).
  let spare = null;
  const prepare = () => {
    spare = fresh();
    spare.catch(() => {});  // said when it is taken
  };
  return {
    handle: async (request) => {
      if (request.op === 'warm') warm = request;
      const answer = await current.evaluate((r) => window.conformanceHandle(r), request);
      // WebAssembly's abort() (onnxruntime-web's C++ aborting) leaves its
      // instance dead, and a failed wait on WebGPU's queue its device: every
      // later run of the page fails or hangs. Another page takes over (its own
      // device and onnxruntime-web, no session of the broken one's), and the
      // broken one is closed; if none can be made, this process ends, and its
      // worker records the case as a crash.
      if (!answer.ok && answer.stage === 'run' && BROKEN.test(answer.error)) {
        const broken = current;
        try {
          current = await (spare || fresh()).catch(() => fresh());  // a spare that failed: once more
          await current.bringToFront();
        } catch (error) {
          process.stderr.write(`no page could be loaded again: ${error}\n`);
          process.exit(72);
        }
        broken.close().catch(() => {});
        prepare();
        answer.reset = true;
      }
      return answer;
    },
    alive: () => browser.connected,
    facts: { chromium: await browser.version(), flags: CHROMIUM_FLAGS },
  };
}

async function open(page, address) {
  await page.goto(address);
  // Polled by time: a page in the background gets no animation frames.
  await page.waitForFunction('window.conformanceReady === true || window.conformanceFailed',
    { polling: 20 });
  const failed = await page.evaluate('window.conformanceFailed || null');
  if (failed) throw new Error(failed);
}

async function inNode() {
  const ort = require('onnxruntime-web');
  const handle = await makeHandler(ort, 'wasm', null);
  return { handle, alive: null, facts: { node: process.version } };
}

let side;
try {
  side = backend === 'webgpu' ? await inBrowser() : await inNode();
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, stage: 'start', error: String(error?.message || error) }) + '\n');
  process.exit(3);
}
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    answer = await side.handle(JSON.parse(line));
    if (answer.ok && answer.info) answer.info = { ...answer.info, ...side.facts };
  } catch (error) {
    // The browser gone while it answered: a crash, not a harness error.
    if (side.alive && !side.alive()) process.exit(70);
    answer = { ok: false, stage: 'harness', error: String(error?.stack || error) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
process.exit(0);
