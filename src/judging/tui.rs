//! The two ways to drive a judging [`Session`]: the terminal UI (ratatui over
//! crossterm: the query, its hypothesis and the fact, the LLM's proposal, progress with
//! the count left, keys 0/1/2 to grade, s or → to skip, b or ← to go back, q to quit),
//! and the scripted-input mode, which reads the same keys as whitespace-separated
//! tokens from a reader and feeds them to the same [`Session::handle`].

use std::io::BufRead;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use super::session::{Flow, Key, Session};
use crate::dataset::Grade;
use crate::error::Error;

/// Asks for the current pair's proposal when `--assist` is on (called before a pair is
/// shown, once per pair).
pub type Proposer<'a> = dyn FnMut(&Session<'_>) -> Result<Option<Grade>, Error> + 'a;

/// Fills in the current pair's proposal, if a proposer is given and it has none yet.
fn propose(
    session: &mut Session<'_>,
    proposer: &mut Option<&mut Proposer<'_>>,
) -> Result<(), Error> {
    if let Some(proposer) = proposer {
        if session.pairs.is_empty() || session.proposals[session.position].is_some() {
            return Ok(());
        }
        let proposal = proposer(session)?;
        session.proposals[session.position] = proposal;
    }
    Ok(())
}

/// Runs the terminal UI until every pair is graded or the person quits.
pub fn run_terminal(
    session: &mut Session<'_>,
    mut proposer: Option<&mut Proposer<'_>>,
) -> Result<Flow, Error> {
    let terminal_error = |error: std::io::Error| Error::Usage(format!("terminal: {error}"));
    let mut terminal = ratatui::try_init().map_err(terminal_error)?;
    let outcome = (|| -> Result<Flow, Error> {
        loop {
            propose(session, &mut proposer)?;
            terminal
                .draw(|frame| draw(frame, session))
                .map_err(terminal_error)?;
            let Event::Key(key) = event::read().map_err(terminal_error)? else {
                continue;
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            let key = match key.code {
                KeyCode::Char('0') => Key::Grade(0),
                KeyCode::Char('1') => Key::Grade(1),
                KeyCode::Char('2') => Key::Grade(2),
                KeyCode::Char('s') | KeyCode::Right => Key::Skip,
                KeyCode::Char('b') | KeyCode::Left | KeyCode::Backspace => Key::Back,
                KeyCode::Char('q') | KeyCode::Esc => Key::Quit,
                _ => continue,
            };
            match session.handle(key)? {
                Flow::Continue => {}
                flow => return Ok(flow),
            }
        }
    })();
    ratatui::restore();
    outcome
}

/// Runs the session on keys read from `input` (whitespace-separated tokens: `0 1 2 s b
/// q`), printing one line per key on `output`; stops at `q`, when every pair is graded,
/// or at the end of the input.
pub fn run_scripted(
    session: &mut Session<'_>,
    mut proposer: Option<&mut Proposer<'_>>,
    input: impl BufRead,
    output: &mut dyn std::io::Write,
) -> Result<Flow, Error> {
    let write_error = |source| Error::Write {
        path: "<stdout>".into(),
        source,
    };
    propose(session, &mut proposer)?;
    writeln!(output, "{}", status(session)).map_err(write_error)?;
    output.flush().map_err(write_error)?;
    for (index, line) in input.lines().enumerate() {
        let line =
            line.map_err(|error| Error::Usage(format!("--keys: line {}: {error}", index + 1)))?;
        for token in line.split_whitespace() {
            let key = Key::parse(token).ok_or_else(|| {
                Error::Usage(format!(
                    "--keys: line {}: unknown key {token:?} (keys: 0 1 2 grade, s skip, b back, q quit)",
                    index + 1
                ))
            })?;
            let flow = session.handle(key)?;
            if flow != Flow::Continue {
                return Ok(flow);
            }
            propose(session, &mut proposer)?;
            writeln!(output, "{}", status(session)).map_err(write_error)?;
            output.flush().map_err(write_error)?;
        }
    }
    Ok(Flow::Quit)
}

/// `pair 3/12 (9 left): q001 / f017, proposed 2`.
pub fn status(session: &Session<'_>) -> String {
    match session.current_ids() {
        Some((query, fact)) => format!(
            "pair {}/{} ({} left): {query} / {fact}{}",
            session.position + 1,
            session.pairs.len(),
            session.left(),
            session.proposals[session.position]
                .map(|grade| format!(", proposed {grade}"))
                .unwrap_or_default()
        ),
        None => "nothing to judge".into(),
    }
}

fn draw(frame: &mut Frame, session: &Session<'_>) {
    let areas = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(5),
        Constraint::Length(6),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .split(frame.area());
    let bold = Style::default().add_modifier(Modifier::BOLD);
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(status(session), bold))),
        areas[0],
    );
    let Some(pair) = session.pairs.get(session.position) else {
        frame.render_widget(Paragraph::new("Nothing left to judge."), areas[1]);
        return;
    };
    let dataset = session.dataset;
    let query = &dataset.queries[pair.query];
    let hypothesis = dataset
        .hypotheses
        .get(&query.id)
        .and_then(|recorded| recorded.texts.first())
        .map_or("(no recorded hypothesis)", String::as_str);
    let fact = &dataset.facts[pair.fact];
    let block = |title: String| Block::bordered().title(title);
    frame.render_widget(
        Paragraph::new(query.text.as_str())
            .wrap(Wrap { trim: true })
            .block(block(format!(
                "Query {} [{}]",
                query.id.0,
                query.tags.join(", ")
            ))),
        areas[1],
    );
    frame.render_widget(
        Paragraph::new(hypothesis)
            .wrap(Wrap { trim: true })
            .block(block("Hypothesis".into())),
        areas[2],
    );
    let given = session.grades[session.position]
        .map(|grade| format!(" - graded {grade}"))
        .unwrap_or_default();
    frame.render_widget(
        Paragraph::new(fact.content.as_str())
            .wrap(Wrap { trim: true })
            .block(block(format!("Fact {}{given}", fact.id.as_str()))),
        areas[3],
    );
    frame.render_widget(
        Paragraph::new("0 not relevant · 1 related · 2 answers · s/→ skip · b/← back · q quit (every grade is saved at once)"),
        areas[4],
    );
}
