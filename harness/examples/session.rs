//! A session with an agent from the library (SPEC section 8): each argument is one prompt,
//! sent in turn as the previous one ends; every permission request is answered on standard
//! input (`y`, `a`, anything else denies); each event is printed as JSON, each turn's end as
//! its outcome. Try it offline against the scripted Claude Code session the tests use:
//!
//! ```text
//! CLAUDE_BIN=fixtures/fake-agent/claude-session \
//!     cargo run -p harness-agents --example session -- plain ask
//! ```
//!
//! or against the real `claude` with prompts of your own (`--backend` is not parsed here: it
//! is always `claude`, the first backend with sessions).

use std::collections::VecDeque;
use std::io::BufRead;

use futures::StreamExt;
use harness_agents::session::SessionItem;
use harness_agents::{Decision, EventBody, OutcomeLine, RunRequest};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut prompts: VecDeque<String> = std::env::args().skip(1).collect();
    let registry = harness_agents::registry();
    let backend = registry.get("claude").ok_or("the claude backend is off")?;

    // Nothing is asked of the agent before the first prompt.
    let mut session = backend.session(RunRequest::default()).await?;
    match prompts.pop_front() {
        Some(first) => session.prompt(first)?,
        None => session.end_input()?,
    }
    while let Some(item) = session.next().await {
        match item {
            SessionItem::Event(event) => {
                println!("{}", serde_json::to_string(&event)?);
                if let EventBody::Permission { id, .. } = &event.body {
                    eprint!("allow? [y]es / [a]lways / [n]o ");
                    let mut answer = String::new();
                    std::io::stdin().lock().read_line(&mut answer)?;
                    let decision = match answer.trim() {
                        "y" => Decision::Allow,
                        "a" => Decision::AllowAlways,
                        _ => Decision::Deny,
                    };
                    session.answer(id.clone(), decision, None)?;
                }
            }
            SessionItem::TurnEnd(outcome) => {
                println!("{}", serde_json::to_string(&OutcomeLine::new(&outcome))?);
                match prompts.pop_front() {
                    Some(next) => session.prompt(next)?,
                    // The queued prompts have run: the session ends.
                    None => session.end_input()?,
                }
            }
            SessionItem::Ended(end) => eprintln!("ended: {:?}", end.reason),
        }
    }
    Ok(())
}
