//! Stand-ins for OpenClaw's WeChat plugin, for tests: `npx` (the plugin's installer) and
//! `openclaw` (`channels login`, `plugins uninstall`) as shell scripts in a folder to put first
//! on `PATH`. Each logs its calls to `calls.log` and prints what the real plugin prints
//! (`openclaw-weixin` 2.4: its Chinese status lines, QR block art and login link), then waits
//! for the "scan": the file [`FakeWechat::scan`] creates. `npx` fails like a registry that
//! does not have the package after [`FakeWechat::fail_installs`].

use std::path::{Path, PathBuf};

/// The login link both fakes print (the QR code encodes it).
pub const LINK: &str = "https://liteapp.weixin.qq.com/q/7GiQu1?qrcode=e2e-login-4711&bot_type=3";

#[derive(Clone)]
pub struct FakeWechat {
    bin: PathBuf,
    /// `<user home>/.openclaw/extensions/openclaw-weixin`, where the fake install puts it.
    plugin: PathBuf,
}

impl FakeWechat {
    /// Writes the fakes into `bin` for a user whose home is `user_home`.
    pub fn new(bin: &Path, user_home: &Path) -> std::io::Result<FakeWechat> {
        let fake = FakeWechat {
            bin: bin.to_owned(),
            plugin: user_home.join(".openclaw/extensions/openclaw-weixin"),
        };
        let login = fake.login_script();
        let plugin = fake.plugin.display();
        fake.script(
            "npx",
            &format!(
                "if [ -f '{fail}' ]; then echo 'npm ERR! 404 Not Found - GET https://registry.npmjs.org/@tencent-weixin%2fopenclaw-weixin-cli' >&2; exit 1; fi\n{login}mkdir -p '{plugin}'\necho '{{\"name\":\"@tencent-weixin/openclaw-weixin\"}}' > '{plugin}/package.json'\n",
                fail = fake.flag("npx-fails").display(),
            ),
        )?;
        fake.script(
            "openclaw",
            &format!(
                "case \"$1 $2\" in\n  'channels login')\n{login};;\n  'plugins uninstall') rm -rf '{plugin}';;\nesac\n"
            ),
        )?;
        Ok(fake)
    }

    /// The plugin's login output, then waiting for the scan.
    fn login_script(&self) -> String {
        format!(
            "echo \"正在启动...\"\necho \"用手机微信扫描以下二维码，以继续连接：\"\necho \"▄▄▄▄▄▄▄ ▄ ▄▄▄ ▄▄▄▄▄▄▄\"\necho \"█ ▄▄▄ █ ▀█▀▄█ █ ▄▄▄ █\"\necho \"若二维码未能显示或无法使用，你可以访问以下链接以继续：\"\necho \"{LINK}\"\necho \"正在等待操作...\"\nwhile [ ! -f '{scan}' ]; do sleep 0.05; done\necho \"已将此 OpenClaw 连接到微信。\"\n",
            scan = self.flag("scanned").display()
        )
    }

    /// An executable that logs `NAME ARGS`, then runs `body`.
    fn script(&self, name: &str, body: &str) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.bin.join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\nenv | grep '^METACLAW_' | cut -d= -f1 >> '{}'\n{body}",
                self.bin.join("calls.log").display(),
                self.bin.join("env.log").display()
            ),
        )?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
    }

    fn flag(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// The phone scanned the QR code: a waiting login (and every later one) goes through.
    pub fn scan(&self) -> std::io::Result<()> {
        std::fs::write(self.flag("scanned"), "")
    }

    /// The next logins wait for a scan again.
    pub fn unscan(&self) -> std::io::Result<()> {
        std::fs::remove_file(self.flag("scanned"))
    }

    /// `npx` fails (`true`) or installs (`false`).
    pub fn fail_installs(&self, fail: bool) -> std::io::Result<()> {
        if fail {
            std::fs::write(self.flag("npx-fails"), "")
        } else {
            std::fs::remove_file(self.flag("npx-fails"))
        }
    }

    /// No `npx` at all (Node.js is not installed).
    pub fn remove_npx(&self) -> std::io::Result<()> {
        std::fs::remove_file(self.bin.join("npx"))
    }

    /// The plugin as an install leaves it.
    pub fn install_plugin(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.plugin)?;
        std::fs::write(self.plugin.join("package.json"), "{}")
    }

    pub fn plugin_dir(&self) -> &Path {
        &self.plugin
    }

    /// The names of MetaClaw's variables (`METACLAW_…`) the fakes were started with.
    pub fn metaclaw_variables_seen(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.join("env.log"))
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Every call so far, `PROGRAM ARGS` one per entry.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.join("calls.log"))
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}
