//! What a command or a hook hands the dispatcher: its output, rendered, in the order it goes
//! out, and how it ends. Commands and hooks compute, render into a `Reply`, and never touch the
//! output; [`Reply::deliver`] is the one place that writes to stdout and stderr (clap's own
//! help and errors included).

use std::io::Write;

use serde::Serialize;

use super::Format;
use super::paint::Paint;
use crate::error::{Error, Exit};
use crate::report::Stream;

/// The version of every JSON object the commands print (`schema_version`).
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// `value` as JSON, an object carrying `schema_version` first.
fn versioned<T: Serialize>(value: &T) -> serde_json::Value {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(fields)) if !fields.contains_key("schema_version") => {
            let mut object = serde_json::Map::new();
            object.insert("schema_version".into(), SCHEMA_VERSION.into());
            object.extend(fields);
            serde_json::Value::Object(object)
        }
        Ok(other) => other,
        Err(_) => serde_json::Value::Null,
    }
}

/// Something done once the whole output got out (`read`'s consume); it may leave a note for
/// stderr.
pub(crate) type Then = Box<dyn FnOnce() -> Option<String>>;

pub(crate) struct Reply {
    pieces: Vec<(Stream, String)>,
    exit: Exit,
    /// The command failed after saying what it has to say (`write`'s refused draft): the
    /// dispatcher prints it and ends with its exit.
    error: Option<Error>,
    then: Option<Then>,
    /// A hook's reply: a failed write changes nothing (a hook never fails its client), and the
    /// exit stays what it is.
    quiet: bool,
    /// How a failed write of the output ends (`verify-handoff` keeps to its 0 / 1 / 2).
    output_failed: Exit,
    /// The streams whose text gets its verdict words coloured (text for people only).
    paint: Paint,
    /// clap's own styled text: its escapes are clap's, not a handoff's, and go out as they are.
    styled: bool,
}

/// The one JSON error object (docs/store.md §0 rule 2), a line of its own.
fn error_object(message: &str, hint: Option<String>) -> String {
    let object = serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "error": {"message": message, "hint": hint},
    });
    format!("{}\n", crate::text::json_unhidden(&object.to_string()))
}

/// One JSON line written as it comes (`handoff-store-mcp --transcript-rows`: a transcript is
/// streamed, never held whole); `false` once the output is gone.
#[cfg(feature = "mcp")]
pub(crate) fn json_line(out: &mut dyn Write, value: &serde_json::Value) -> bool {
    writeln!(out, "{value}").is_ok()
}

impl Reply {
    /// Nothing printed yet; ends with `exit`.
    pub(crate) fn new(exit: Exit) -> Reply {
        Reply {
            pieces: Vec::new(),
            exit,
            error: None,
            then: None,
            quiet: false,
            output_failed: Exit::Failure,
            paint: Paint::default(),
            styled: false,
        }
    }

    /// Colour the verdict words of what goes to the streams `paint` names.
    pub(crate) fn painted(mut self, paint: Paint) -> Reply {
        self.paint = paint;
        self
    }

    /// A hook's reply: a failed write changes nothing, and the exit stays what it is.
    pub(crate) fn quiet(mut self) -> Reply {
        self.quiet = true;
        self
    }

    /// clap's own output (help, version, a usage error) and its exit, in clap's colours where
    /// `paint` says so.
    pub(crate) fn clap(e: &clap::Error, paint: Paint, json: bool) -> Reply {
        if json && e.use_stderr() {
            // A usage error asked for in JSON: one object, like every other failure.
            let plain = e.render().to_string();
            let mut lines = plain.lines().map(str::trim).filter(|l| !l.is_empty());
            let message = lines
                .next()
                .map(|l| l.strip_prefix("error: ").unwrap_or(l).to_string())
                .unwrap_or_default();
            let hint: Vec<&str> = lines.collect();
            let hint = (!hint.is_empty()).then(|| hint.join(" "));
            let mut r = Reply::new(Exit::of_clap(e.exit_code()));
            r.pieces.push((Stream::Out, error_object(&message, hint)));
            return r;
        }
        let (stream, coloured) = if e.use_stderr() {
            (Stream::Err, paint.err)
        } else {
            (Stream::Out, paint.out)
        };
        let mut r = Reply::new(Exit::of_clap(e.exit_code()));
        r.styled = true;
        let text = e.render();
        r.pieces.push((
            stream,
            if coloured {
                text.ansi().to_string()
            } else {
                text.to_string()
            },
        ));
        r
    }

    /// A command that failed before it had anything to say. For `--format json`, stdout also
    /// gets the error as an object (`{"schema_version": 1, "error": {"message", "hint"}}`); the
    /// exit is the error's either way.
    pub(crate) fn error(e: Error, format: Format) -> Reply {
        Reply::new(Exit::Ok).failed_in(e, format)
    }

    /// End with `error`; in JSON, as the one error object when nothing went to stdout yet (a
    /// refusal that printed its result object already says `stored: false` there).
    pub(crate) fn failed_in(mut self, e: Error, format: Format) -> Reply {
        if format == Format::Json && !self.pieces.iter().any(|(s, _)| *s == Stream::Out) {
            self.pieces
                .push((Stream::Out, error_object(&e.report(), e.hint())));
        }
        self.failed(e)
    }

    /// How a failed write of the output ends.
    pub(crate) fn output_failed(mut self, exit: Exit) -> Reply {
        self.output_failed = exit;
        self
    }

    /// `value` as one line of JSON, or as `text` renders it for people.
    pub(crate) fn show<T: Serialize>(
        format: Format,
        value: &T,
        text: impl FnOnce(&T) -> String,
    ) -> Result<Reply, Error> {
        Reply::new(Exit::Ok).shown(format, value, text)
    }

    /// [`Reply::show`], after what this reply already holds.
    pub(crate) fn shown<T: Serialize>(
        mut self,
        format: Format,
        value: &T,
        text: impl FnOnce(&T) -> String,
    ) -> Result<Reply, Error> {
        let rendered = match format {
            Format::Json => {
                let mut json = serde_json::to_string(&versioned(value))
                    .map_err(|e| Error::Output(std::io::Error::from(e)))?;
                json.push('\n');
                // Invisible characters as JSON escapes, so the renderer's escaping for people
                // finds none to turn into text JSON would not parse.
                crate::text::json_unhidden(&json).into_owned()
            }
            Format::Text => text(value),
        };
        self.pieces.push((Stream::Out, rendered));
        Ok(self)
    }

    /// Lines, each to its stream, after what this reply already holds.
    pub(crate) fn lines(mut self, lines: impl IntoIterator<Item = (Stream, String)>) -> Reply {
        self.pieces.extend(lines.into_iter().map(|(s, mut line)| {
            line.push('\n');
            (s, line)
        }));
        self
    }

    /// Text for stdout, as it is (its own newlines).
    pub(crate) fn text(mut self, text: String) -> Reply {
        self.pieces.push((Stream::Out, text));
        self
    }

    /// One line for stderr.
    pub(crate) fn note(self, line: String) -> Reply {
        self.lines([(Stream::Err, line)])
    }

    pub(crate) fn exit(mut self, exit: Exit) -> Reply {
        self.exit = exit;
        self
    }

    pub(crate) fn failed(mut self, error: Error) -> Reply {
        self.error = Some(error);
        self
    }

    pub(crate) fn then(mut self, then: Then) -> Reply {
        self.then = Some(then);
        self
    }

    /// Write it out: each piece to its stream in order (runs for one stream in one write);
    /// then the error, or what follows. A closed stdout ends the output quietly, skips what
    /// follows and keeps the exit.
    pub(crate) fn deliver(self, out: &mut dyn Write, err: &mut dyn Write, prefix: &str) -> Exit {
        // Consecutive pieces for one stream go out in one write (a 1,000-citation report is a
        // handful of writes, not 2,000).
        let mut runs: Vec<(Stream, String)> = Vec::new();
        for (stream, text) in self.pieces {
            match runs.last_mut() {
                Some((last, run)) if *last == stream => run.push_str(&text),
                _ => runs.push((stream, text)),
            }
        }
        for (stream, text) in &runs {
            let (w, coloured): (&mut dyn Write, bool) = match stream {
                Stream::Out => (&mut *out, self.paint.out),
                Stream::Err => (&mut *err, self.paint.err),
            };
            // Control characters from a handoff, a remote or a path are shown, never acted on;
            // then the verdict words are painted.
            let shown = if self.styled {
                std::borrow::Cow::Borrowed(text.as_str())
            } else {
                crate::text::visible(text)
            };
            let painted;
            let text = if coloured {
                painted = super::paint::paint(&shown);
                &painted
            } else {
                shown.as_ref()
            };
            let written = w.write_all(text.as_bytes()).and_then(|()| w.flush());
            match written {
                Ok(()) => {}
                Err(e) if super::is_broken_pipe(&e) => return self.exit,
                Err(_) if self.quiet => return self.exit,
                Err(e) if *stream == Stream::Out => {
                    let _ = err.write_all(Error::Output(e).lines(prefix).as_bytes());
                    return self.output_failed;
                }
                Err(_) => {}
            }
        }
        if let Some(e) = self.error {
            let _ = err.write_all(crate::text::visible(&e.lines(prefix)).as_bytes());
            return e.exit();
        }
        if let Some(then) = self.then
            && let Some(note) = then()
        {
            let note = crate::text::visible(&note);
            let _ = writeln!(err, "{note}").and_then(|()| err.flush());
        }
        self.exit
    }
}
