//! The session's bookkeeping, rule by rule (I2-I4, I6), and its command parser (I2).

use super::*;

fn prompt(text: &str) -> Command {
    Command::Prompt(text.into())
}

fn start(turn: u32, text: &str) -> Step {
    Step::StartTurn {
        turn,
        text: text.into(),
    }
}

fn answer(id: &str, decision: Decision) -> Command {
    Command::Permission {
        id: id.into(),
        decision,
        message: None,
    }
}

const ALL: &[Decision] = &Decision::ALL;

#[test]
fn i1_nothing_is_asked_before_the_first_prompt() {
    let session = SessionState::new();
    assert_eq!(session.running_turn(), None);
    assert_eq!(session.turns_started(), 0);
    assert!(!session.is_finished());
}

#[test]
fn i2_prompts_run_one_at_a_time_in_the_order_sent() {
    let mut s = SessionState::new();
    assert_eq!(s.command(prompt("a")), [start(1, "a")]);
    assert_eq!(s.command(prompt("b")), []);
    assert_eq!(s.command(prompt("c")), []);
    assert_eq!(s.queued(), 2);
    let (end, steps) = s.turn_ended();
    assert_eq!(
        end,
        Some(TurnEnd {
            turn: 1,
            interrupted: false
        })
    );
    assert_eq!(steps, [start(2, "b")]);
    let (_, steps) = s.turn_ended();
    assert_eq!(steps, [start(3, "c")]);
    let (_, steps) = s.turn_ended();
    assert_eq!(steps, []);
    assert_eq!(s.running_turn(), None);
    assert_eq!(s.command(prompt("d")), [start(4, "d")]);
}

#[test]
fn i2_interrupt_withdraws_waiting_requests_then_stops_the_turn() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    assert_eq!(s.permission_asked("r1", ALL), []);
    assert_eq!(s.permission_asked("r2", ALL), []);
    assert_eq!(
        s.command(Command::Interrupt),
        [
            Step::Withdraw {
                id: "r1".into(),
                why: Withdrawal::Interrupted
            },
            Step::Withdraw {
                id: "r2".into(),
                why: Withdrawal::Interrupted
            },
            Step::Interrupt,
        ]
    );
    // A request made while the turn is being interrupted gets no caller.
    assert_eq!(
        s.permission_asked("r3", ALL),
        [Step::Withdraw {
            id: "r3".into(),
            why: Withdrawal::Interrupted
        }]
    );
    assert!(matches!(&s.command(Command::Interrupt)[..], [Step::Warn(w)] if w.contains("already")));
    let (end, steps) = s.turn_ended();
    assert_eq!(
        end,
        Some(TurnEnd {
            turn: 1,
            interrupted: true
        })
    );
    assert_eq!(steps, []);
    // The session stays open.
    assert_eq!(s.command(prompt("b")), [start(2, "b")]);
}

#[test]
fn i2_interrupt_with_no_turn_running_is_only_a_warning() {
    let mut s = SessionState::new();
    assert_eq!(
        s.command(Command::Interrupt),
        [Step::Warn("interrupt: no turn is running".into())]
    );
    assert_eq!(s.command(prompt("a")), [start(1, "a")]);
}

#[test]
fn i2_close_interrupts_the_turn_drops_the_queue_and_ends_after_the_turn() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.command(prompt("queued"));
    s.permission_asked("r1", ALL);
    assert_eq!(
        s.command(Command::Close),
        [
            Step::Withdraw {
                id: "r1".into(),
                why: Withdrawal::Interrupted
            },
            Step::Interrupt
        ]
    );
    assert_eq!(s.queued(), 0);
    assert!(matches!(&s.command(prompt("late"))[..], [Step::Warn(_)]));
    let (end, steps) = s.turn_ended();
    assert_eq!(end.map(|e| e.interrupted), Some(true));
    assert_eq!(steps, [Step::Finish]);
    assert!(s.is_finished());
}

#[test]
fn i2_close_when_idle_ends_at_once() {
    let mut s = SessionState::new();
    assert_eq!(s.command(Command::Close), [Step::Finish]);
    assert!(s.is_finished());
    assert_eq!(s.input_closed(), []);
}

#[test]
fn i2_end_of_input_runs_the_queued_prompts_then_ends() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.command(prompt("b"));
    assert_eq!(s.input_closed(), []);
    assert_eq!(s.turn_ended().1, [start(2, "b")]);
    assert_eq!(s.turn_ended().1, [Step::Finish]);
    assert!(s.is_finished());
}

#[test]
fn i2_end_of_input_when_idle_ends_at_once() {
    let mut s = SessionState::new();
    assert_eq!(s.input_closed(), [Step::Finish]);
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.turn_ended();
    assert_eq!(s.input_closed(), [Step::Finish]);
}

#[test]
fn i6_requests_with_nobody_left_to_answer_are_withdrawn() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.permission_asked("r1", ALL);
    assert_eq!(
        s.input_closed(),
        [Step::Withdraw {
            id: "r1".into(),
            why: Withdrawal::NoCaller
        }]
    );
    assert_eq!(
        s.permission_asked("r2", ALL),
        [Step::Withdraw {
            id: "r2".into(),
            why: Withdrawal::NoCaller
        }]
    );
    assert_eq!(s.turn_ended().1, [Step::Finish]);
}

#[test]
fn i4_an_answer_goes_to_the_request_it_names_once() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.permission_asked("r1", ALL);
    s.permission_asked("r2", &[Decision::Allow, Decision::Deny]);
    assert_eq!(s.pending().collect::<Vec<_>>(), ["r1", "r2"]);
    assert_eq!(
        s.command(Command::Permission {
            id: "r2".into(),
            decision: Decision::Deny,
            message: Some("not there".into())
        }),
        [Step::Answer {
            id: "r2".into(),
            decision: Decision::Deny,
            message: Some("not there".into())
        }]
    );
    assert_eq!(
        s.command(answer("r2", Decision::Allow)),
        [Step::Warn(
            "permission: no request `r2` is waiting for an answer".into()
        )]
    );
    assert_eq!(s.pending().collect::<Vec<_>>(), ["r1"]);
}

#[test]
fn i4_a_decision_the_request_does_not_offer_is_a_warning_and_it_keeps_waiting() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.permission_asked("r1", &[Decision::Allow, Decision::Deny]);
    assert_eq!(
        s.command(answer("r1", Decision::AllowAlways)),
        [Step::Warn(
            "permission: request `r1` does not offer `allow_always` (it offers allow, deny)".into()
        )]
    );
    assert_eq!(
        s.command(answer("r1", Decision::Allow)),
        [Step::Answer {
            id: "r1".into(),
            decision: Decision::Allow,
            message: None
        }]
    );
}

#[test]
fn i4_a_request_the_agent_withdrew_can_no_longer_be_answered() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.permission_asked("r1", ALL);
    s.permission_withdrawn("r1");
    assert!(matches!(
        &s.command(answer("r1", Decision::Allow))[..],
        [Step::Warn(_)]
    ));
}

#[test]
fn i3_requests_left_at_a_turn_end_are_forgotten() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.permission_asked("r1", ALL);
    s.turn_ended();
    assert_eq!(s.pending().count(), 0);
    assert!(matches!(
        &s.command(answer("r1", Decision::Allow))[..],
        [Step::Warn(_)]
    ));
}

#[test]
fn i6_the_agent_exiting_ends_the_turn_and_the_session() {
    let mut s = SessionState::new();
    s.command(prompt("a"));
    s.command(prompt("b"));
    assert_eq!(
        s.agent_exited(),
        Some(TurnEnd {
            turn: 1,
            interrupted: false
        })
    );
    assert!(s.is_finished());
    assert_eq!(s.queued(), 0);
    assert_eq!(s.turn_ended(), (None, vec![]));
    assert!(matches!(&s.command(prompt("c"))[..], [Step::Warn(_)]));
}

#[test]
fn a_turn_end_without_a_running_turn_changes_nothing() {
    let mut s = SessionState::new();
    assert_eq!(s.turn_ended(), (None, vec![]));
    assert_eq!(s.command(prompt("a")), [start(1, "a")]);
}

#[test]
fn i2_commands_parse_as_the_spec_writes_them() {
    assert_eq!(
        parse_command(br#"{"type":"prompt","text":"hi"}"#),
        Ok(prompt("hi"))
    );
    assert_eq!(
        parse_command(b"{\"type\":\"interrupt\"}\r\n"),
        Ok(Command::Interrupt)
    );
    assert_eq!(parse_command(br#"{"type":"close"}"#), Ok(Command::Close));
    assert_eq!(
        parse_command(br#"{"type":"permission","id":"toolu_1","decision":"allow_always"}"#),
        Ok(answer("toolu_1", Decision::AllowAlways))
    );
    // JSON-RPC request ids are numbers: the event prints them as numbers too.
    assert_eq!(
        parse_command(br#"{"type":"permission","id":7,"decision":"allow"}"#),
        Ok(answer("7", Decision::Allow))
    );
    // Members a command does not use are ignored (a newer caller).
    assert_eq!(
        parse_command(br#"{"type":"prompt","text":"hi","images":[]}"#),
        Ok(prompt("hi"))
    );
}

#[test]
fn i2_a_bad_line_names_what_was_wrong() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "an empty command line"),
        (b"   ", "an empty command line"),
        (b"\xff", "a command line is not UTF-8"),
        (b"[1]", "a command must be a JSON object"),
        (br#"{"text":"hi"}"#, "a command needs a `type`"),
        (br#"{"type":3}"#, "a command's `type` must be a string"),
        (
            br#"{"type":"promt","text":"hi"}"#,
            "unknown command type `promt` (prompt, interrupt, permission, close)",
        ),
        (br#"{"type":"prompt"}"#, "a prompt needs a `text`"),
        (
            br#"{"type":"prompt","text":""}"#,
            "a prompt's `text` is empty",
        ),
        (
            br#"{"type":"prompt","text":["hi"]}"#,
            "a prompt's `text` must be a string",
        ),
        (
            br#"{"type":"permission","decision":"allow"}"#,
            "a permission answer needs an `id`",
        ),
        (
            br#"{"type":"permission","id":"","decision":"allow"}"#,
            "a permission answer's `id` must be a non-empty string",
        ),
        (
            br#"{"type":"permission","id":"r"}"#,
            "a permission answer needs a `decision`",
        ),
        (
            br#"{"type":"permission","id":"r","decision":"yes"}"#,
            "unknown decision `yes` (allow, allow_always, deny)",
        ),
        (
            br#"{"type":"permission","id":"r","decision":"deny","message":5}"#,
            "a permission answer's `message` must be a string",
        ),
    ];
    for (line, want) in cases {
        assert_eq!(
            parse_command(line),
            Err(InputError((*want).into())),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    let Err(InputError(text)) = parse_command(b"{not json") else {
        panic!("not JSON parsed");
    };
    assert!(text.starts_with("a command line is not JSON ("), "{text}");
    let long = format!(r#"{{"type":"{}"}}"#, "x".repeat(10_000));
    let Err(InputError(text)) = parse_command(long.as_bytes()) else {
        panic!("an unknown type parsed");
    };
    assert!(text.len() < 200, "{}", text.len());
}
