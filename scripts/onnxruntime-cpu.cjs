// vidembed's `preinstall` (issue 33): onnxruntime-node's own install script downloads its CUDA
// libraries (hundreds of MB from NuGet) unless they are already there. vidembed runs every model on
// the CPU and never loads them, and inside a project its package.json `allowScripts` denies that
// script; installed as a package (`npm install -g vidembed`), no allowScripts of ours applies. npm
// runs every package's preinstall before any postinstall, so this puts an empty placeholder where
// each CUDA file would go — for onnxruntime-node's copy inside vidembed's own folder only (a global
// install, or this repository), never a copy another package shares — and its script then finds
// them "installed" and downloads nothing. ONNXRUNTIME_NODE_INSTALL (or --onnxruntime-node-install)
// set by the user means they chose: then this does nothing.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const chosen = ['ONNXRUNTIME_NODE_INSTALL', 'npm_config_onnxruntime_node_install', 'ONNXRUNTIME_NODE_INSTALL_CUDA', 'npm_config_onnxruntime_node_install_cuda'];
if (chosen.some((k) => process.env[k])) process.exit(0);

const own = path.resolve(__dirname, '..');
let dir;
try {
  dir = path.dirname(require.resolve('onnxruntime-node/package.json', { paths: [own] }));
} catch {
  process.exit(0); // not installed (yet): nothing to keep from downloading
}
if (!dir.startsWith(own + path.sep)) process.exit(0);

try {
  const meta = require(path.join(dir, 'script', 'install-metadata.js'));
  const platform = `${process.platform}/${process.arch}`;
  const placed = [];
  for (const name of meta.requirements?.[platform] ?? []) {
    for (const file of Object.keys(meta.manifests?.[`${platform}:${name}`] ?? {})) {
      const target = path.join(dir, 'bin', 'napi-v6', platform, file);
      if (fs.existsSync(target)) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, '');
      placed.push(path.basename(target));
    }
  }
  if (placed.length) console.log(`vidembed: onnxruntime-node will not download ${placed.join(', ')} (vidembed runs on the CPU; set ONNXRUNTIME_NODE_INSTALL=cuda12 to get them)`);
} catch (err) {
  // A layout this does not know: onnxruntime-node's script decides, as it would without us.
  console.log(`vidembed: could not keep onnxruntime-node from downloading CUDA files: ${err && err.message}`);
}
