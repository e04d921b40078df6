// One request of runner.mjs's protocol answered with onnxruntime-web: the same
// code in Node (the wasm backend) and in Chromium's page (the webgpu backend).
// It imports nothing: it is given onnxruntime-web's module.

// onnxruntime-web's tensor types -> the typed array its data is; bool is bytes,
// float16 its bits (a Uint16Array, which onnxruntime-web takes for float16).
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array,
};

function toBytes(text) {
  if (typeof Buffer !== 'undefined') return new Uint8Array(Buffer.from(text, 'base64'));
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function toText(bytes) {
  if (typeof Buffer !== 'undefined') return Buffer.from(bytes).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function tensorIn(ort, wire) {
  if (wire.type === 'string') return new ort.Tensor('string', wire.strings, wire.dims);
  const bytes = toBytes(wire.data);
  const Kind = ARRAYS[wire.type];
  // A fresh buffer: a typed array must start at a multiple of its element size.
  const data = new Kind(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new ort.Tensor(wire.type, data, wire.dims);
}

function tensorOut(tensor) {
  const dims = Array.from(tensor.dims, Number);
  if (tensor.type === 'string') return { type: 'string', dims, strings: Array.from(tensor.data) };
  const data = tensor.data;
  return { type: tensor.type, dims,
    data: toText(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)) };
}

function message(error) {
  return String(error?.message || error);
}

async function adapterFacts() {
  if (typeof navigator === 'undefined' || !navigator.gpu) return null;
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return { missing: 'navigator.gpu.requestAdapter() returned null' };
  const info = adapter.info || {};
  return {
    vendor: info.vendor, architecture: info.architecture, device: info.device,
    description: info.description,
    software: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
  };
}

export async function makeHandler(ort, backend) {
  // One thread: the harness runs a worker per core, and a page is not
  // cross-origin isolated everywhere; no logs: an error comes back in the answer.
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'fatal';
  const options = {
    executionProviders: [backend],
    logSeverityLevel: 4,  // fatal only: an error comes back in the answer
    // A node the WebGPU backend has no kernel for would run on the CPU (its
    // WebAssembly kernels) and be judged under WebGPU's name: refused instead.
    // Constant folding would compute a Gather of two initializers on the CPU at
    // load, judged under WebGPU's name too: no graph optimization on webgpu.
    ...(backend === 'webgpu'
      ? { extra: { session: { disable_cpu_ep_fallback: '1' } }, graphOptimizationLevel: 'disabled' }
      : {}),
  };
  const sessions = new Map();
  let next = 0;
  const gpu = backend === 'webgpu' ? await adapterFacts() : null;
  return async (request) => {
    if (request.op === 'info') {
      return { ok: true, info: { version: ort.env.versions.web, versions: ort.env.versions,
        backend, numThreads: ort.env.wasm.numThreads,
        disable_cpu_ep_fallback: backend === 'webgpu',
        graphOptimizationLevel: options.graphOptimizationLevel || 'all', gpu } };
    }
    if (request.op === 'warm') {
      // WebGPU's device and onnxruntime-web's backend start at the first
      // session, and its shaders compile at the first run: seconds that would
      // count against the first case, so a probe model runs first.
      const session = await ort.InferenceSession.create(toBytes(request.model), options);
      const feeds = {};
      for (const [name, wire] of Object.entries(request.feeds)) feeds[name] = tensorIn(ort, wire);
      await session.run(feeds);
      await session.release();
      return { ok: true };
    }
    if (request.op === 'release') {
      for (const id of request.sessions) {
        const session = sessions.get(id);
        sessions.delete(id);
        if (session) await session.release();
      }
      return { ok: true };
    }
    if (request.op === 'load') {
      let session;
      try {
        session = await ort.InferenceSession.create(toBytes(request.model), options);
      } catch (error) {
        return { ok: false, stage: 'load', error: message(error) };
      }
      next += 1;
      sessions.set(next, session);
      return { ok: true, session: next, inputs: session.inputNames, outputs: session.outputNames };
    }
    if (request.op === 'run') {
      const session = sessions.get(request.session);
      const feeds = {};
      for (const [name, wire] of Object.entries(request.feeds)) feeds[name] = tensorIn(ort, wire);
      let results;
      try {
        results = await session.run(feeds);
      } catch (error) {
        return { ok: false, stage: 'run', error: message(error) };
      }
      return { ok: true, outputs: session.outputNames.map((name) => tensorOut(results[name])) };
    }
    return { ok: false, stage: 'harness', error: `unknown request ${request.op}` };
  };
}
