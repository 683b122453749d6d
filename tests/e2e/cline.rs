//! Cline's CLI (`cline`): `install cline`'s TaskStart hook fires in the real CLI, which runs it
//! detached and drops its output, so the handoff must stay unread.

use crate::harness::{Check, Client, Scenario, Scene, Suite, ensure, stop_left_behind, wait_for};

pub const SCENARIOS: &[Scenario] = &[(
    "cline: install cline's TaskStart fires in the real CLI and leaves the handoff unread",
    Suite::cline_task_start,
)];

pub const CLIENT: Client = Client {
    package: "cline",
    version: "3.0.65",
    program: "cline",
    folder: "cline",
};

impl Suite {
    /// Cline's CLI: `handoff-store install cline` puts the TaskStart script into the
    /// repository's `.clinerules/hooks/`; the user's own step is pointing Cline at a provider
    /// (`cline auth`, here the loopback mock). The real CLI discovers the script and runs it
    /// with its payload (hookName `agent_start`), and our hook answers (its claim is recorded).
    /// This is as far as it goes: Cline 3.0.65's CLI runs start hooks detached and does not pass
    /// their output to the model, so the handoff must stay unread for the next task — checked.
    fn cline_task_start(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-cline")?;
        let (code, said) = self.store_cmd(&scene, &["install", "cline"], None);
        ensure(code == 0, || format!("install cline: {said}"))?;
        let cline = |args: &[&str]| self.run_client(&self.cline, &scene, &[], args);
        self.cline_auth(&scene)?;
        let mark = self.mock.mark();
        cline(&["say ok"])?;
        ensure(!self.mock.since(mark).is_empty(), || {
            "cline sent the mock nothing".into()
        })?;
        // Cline runs the hook detached: its claim shows up on its own time.
        let ran = wait_for("Cline to run our TaskStart hook", || {
            Self::claimed_clear(&scene)
        });
        // Cline's CLI leaves its hub daemon running after the task; it must not outlive the scene.
        stop_left_behind(&scene.home);
        ran?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=complete"), || {
            format!("a delivery whose output Cline drops consumed the handoff: {orient}")
        })
    }

    /// The user's own step: pointing Cline at a provider (`cline auth`), here the loopback mock.
    pub fn cline_auth(&self, scene: &Scene) -> Result<String, String> {
        let base = format!("{}/v1", self.mock.url());
        self.run_client(
            &self.cline,
            scene,
            &[],
            &[
                "auth",
                "-p",
                "openai-compatible",
                "-k",
                "e2e-not-a-key",
                "-m",
                "mock",
                "-b",
                &base,
            ],
        )
    }
}
