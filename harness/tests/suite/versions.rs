//! The agent versions the recordings cover, one table per backend: each older release has its
//! folder of recordings, and the ACP agents recorded are at their own backends' releases.

use harness_agents::registry;

#[test]
fn each_older_recorded_release_has_its_recordings() {
    let registry = registry();
    for backend in registry.names().filter_map(|n| registry.get(n)) {
        let Some(versions) = backend.versions() else {
            continue;
        };
        assert!(
            fixtures::root().join(backend.name()).is_dir(),
            "{}",
            backend.name()
        );
        for older in versions.older {
            let folder = fixtures::root().join(format!("{}-{older}", backend.name()));
            assert!(folder.is_dir(), "{} has no recordings", folder.display());
        }
    }
}

#[test]
fn acp_agents_are_recorded_at_their_own_backends_releases() {
    let registry = registry();
    let acp = registry.get("acp").unwrap();
    let mut recorded = 0;
    for agent in acp.known_agents() {
        let Some(versions) = agent.versions else {
            continue;
        };
        let own = registry.get(agent.name).and_then(|b| b.versions()).unwrap();
        assert_eq!(versions.recorded, own.recorded, "{}", agent.name);
        recorded += 1;
    }
    assert_eq!(recorded, 4, "gemini, opencode, qwen and copilot");
}
