//! Terminal tables that fit the output's width without ever splitting a cell: a table
//! too wide is cut into column groups (the first column repeated in each), and one
//! whose first column and any other column cannot fit side by side turns vertical (one
//! block per row, one `header  value` line per column). The width is the terminal's
//! when stdout is a terminal reporting a positive width, else `COLUMNS`, else unknown
//! (no limit): a terminal reporting 0 columns counts as unknown. `NO_COLOR` (set and
//! not empty) turns styling (bold) off. Widths are what a terminal shows: colour and
//! style escape codes take none, and a character takes its Unicode display width. The choices are pure functions of their
//! inputs; [`output_width`] and [`new_table`] read the process's terminal and
//! environment.

use std::ffi::OsStr;
use std::sync::OnceLock;

use comfy_table::{presets, Cell, ContentArrangement, Table};

/// A terminal table in hyde-eval's style; cells are never wrapped (see [`fit`]), and
/// styling is off under `NO_COLOR`.
pub fn new_table() -> Table {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    if !styling_allowed(std::env::var_os("NO_COLOR").as_deref()) {
        table.force_no_tty();
    }
    table
}

/// A table of prose (descriptions): its text wraps at spaces to the output width when
/// that is known, and is left whole when it is not.
pub fn new_prose_table() -> Table {
    let mut table = new_table();
    if let Some(width) = output_width() {
        table
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX));
    }
    table
}

/// Whether tables may be styled, given the value of `NO_COLOR` (no-color.org: any
/// non-empty value turns color and styling off).
pub fn styling_allowed(no_color: Option<&OsStr>) -> bool {
    no_color.is_none_or(OsStr::is_empty)
}

/// The width terminal tables must fit, detected once per process.
pub fn output_width() -> Option<usize> {
    static WIDTH: OnceLock<Option<usize>> = OnceLock::new();
    *WIDTH.get_or_init(|| {
        // comfy-table asks the terminal only when stdout is one.
        let terminal = Table::new().width();
        width_from(terminal, std::env::var("COLUMNS").ok().as_deref())
    })
}

/// The width from the terminal's report (`None` when stdout is no terminal) and the
/// `COLUMNS` variable: a positive terminal width, else a positive `COLUMNS`, else unknown.
pub fn width_from(terminal: Option<u16>, columns: Option<&str>) -> Option<usize> {
    terminal
        .filter(|&width| width > 0)
        .map(usize::from)
        .or_else(|| {
            columns
                .and_then(|columns| columns.trim().parse::<usize>().ok())
                .filter(|&width| width > 0)
        })
}

/// `table` rendered to fit [`output_width`].
pub fn fit(table: &Table) -> String {
    fit_to(table, output_width())
}

/// `table` rendered no wider than `width` (when known): whole when it fits, else in
/// as few column groups as fit, each repeating the first column and the groups as even
/// in width as they can be, else vertically.
pub fn fit_to(table: &Table, width: Option<usize>) -> String {
    let whole = table.to_string();
    let Some(width) = width else {
        return whole;
    };
    if widest_line(&whole) <= width {
        return whole;
    }
    let header: Vec<Cell> = table
        .header()
        .map(|row| row.cell_iter().cloned().collect())
        .unwrap_or_default();
    let rows: Vec<Vec<Cell>> = table
        .row_iter()
        .map(|row| row.cell_iter().cloned().collect())
        .collect();
    let columns = rows
        .iter()
        .map(Vec::len)
        .chain([header.len()])
        .max()
        .unwrap_or(0);
    // The fewest column groups no wider than `limit` (each packed as full as it goes);
    // `None` when the first column and some other one are wider together.
    let groups_within = |limit: usize| -> Option<Vec<Vec<usize>>> {
        let fits = |group: &[usize]| widest_line(&select(&header, &rows, group)) <= limit;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current = vec![0];
        for column in 1..columns {
            let mut wider = current.clone();
            wider.push(column);
            if fits(&wider) {
                current = wider;
            } else if current.len() > 1 && fits(&[0, column]) {
                groups.push(std::mem::replace(&mut current, vec![0, column]));
            } else {
                return None;
            }
        }
        if current.len() == 1 {
            return None;
        }
        groups.push(current);
        Some(groups)
    };
    let Some(fewest) = groups_within(width) else {
        return vertical(&header, &rows);
    };
    // As many groups, as even as they can be (not ten columns and then one): the
    // narrowest limit that needs no more groups. Fewer groups never need a narrower
    // limit, so it is found by bisection.
    let (mut narrow, mut wide) = (0, width);
    let mut even = fewest.clone();
    while narrow + 1 < wide {
        let limit = (narrow + wide) / 2;
        match groups_within(limit).filter(|groups| groups.len() <= fewest.len()) {
            Some(groups) => {
                even = groups;
                wide = limit;
            }
            None => narrow = limit,
        }
    }
    even.iter()
        .map(|group| select(&header, &rows, group))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The columns `group` of a table, rendered.
fn select(header: &[Cell], rows: &[Vec<Cell>], group: &[usize]) -> String {
    let pick = |cells: &[Cell]| -> Vec<Cell> {
        group
            .iter()
            .map(|&column| cells.get(column).cloned().unwrap_or_else(|| Cell::new("")))
            .collect()
    };
    let mut table = new_table();
    if !header.is_empty() {
        table.set_header(pick(header));
    }
    for row in rows {
        table.add_row(pick(row));
    }
    table.to_string()
}

/// One block per row: its first cell, then `header  value` per other column.
fn vertical(header: &[Cell], rows: &[Vec<Cell>]) -> String {
    let name = |column: usize| header.get(column).map_or(String::new(), Cell::content);
    let label_width = (1..header.len())
        .map(|column| name(column).chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for row in rows {
        let Some((first, rest)) = row.split_first() else {
            continue;
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&first.content());
        for (index, cell) in rest.iter().enumerate() {
            let label = name(index + 1);
            let value = cell.content().replace('\n', "\n    ");
            text.push_str(&format!("\n  {label:<label_width$}  {value}"));
        }
    }
    text
}

/// `text` with each line that is not part of a table wrapped at spaces to `width`
/// (when known), so that a terminal never breaks a word or number; a wrapped line's
/// continuation keeps its indentation. A word longer than the width stays whole.
pub fn wrap_prose(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let mut wrapped: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let is_table = line.starts_with(['┌', '│', '╞', '├', '└']);
        if is_table || visible_width(line) <= width {
            wrapped.push(line.to_owned());
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let mut current = String::new();
        for word in line.split_whitespace() {
            let candidate = if current.is_empty() {
                format!("{indent}{word}")
            } else {
                format!("{current} {word}")
            };
            if visible_width(&candidate) > width && !current.is_empty() {
                wrapped.push(std::mem::replace(&mut current, format!("{indent}{word}")));
            } else {
                current = candidate;
            }
        }
        wrapped.push(current);
    }
    wrapped.join("\n")
}

/// The columns `line` takes on a terminal: escape codes (colour, bold) take none.
pub fn visible_width(line: &str) -> usize {
    console::measure_text_width(line)
}

fn widest_line(text: &str) -> usize {
    text.lines().map(visible_width).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(columns: usize) -> Table {
        let mut table = new_table();
        let mut header = vec!["configuration".to_owned()];
        header.extend((1..columns).map(|column| format!("nDCG@{column}")));
        table.set_header(header);
        for name in ["keyword", "hyde-3b-hyp"] {
            let mut row = vec![name.to_owned()];
            row.extend((1..columns).map(|column| format!("0.{column:04}*")));
            table.add_row(row);
        }
        table
    }

    #[test]
    fn the_width_is_the_terminals_then_columns_and_zero_is_unknown() {
        assert_eq!(width_from(Some(120), Some("80")), Some(120));
        assert_eq!(width_from(Some(0), Some("80")), Some(80));
        assert_eq!(width_from(Some(0), None), None);
        assert_eq!(width_from(None, Some("100")), Some(100));
        assert_eq!(width_from(None, Some("0")), None);
        assert_eq!(width_from(None, Some("wide")), None);
        assert_eq!(width_from(None, None), None);
    }

    #[test]
    fn no_color_turns_styling_off_when_set_and_not_empty() {
        assert!(styling_allowed(None));
        assert!(styling_allowed(Some(OsStr::new(""))));
        assert!(!styling_allowed(Some(OsStr::new("1"))));
    }

    #[test]
    fn prose_wraps_at_spaces_and_tables_stay_whole() {
        let text = "devmem: 220 facts, 90 queries (90 evaluated)\n│ keyword ┆ 0.1980 ┆ 0.3778 │\n  indented words that go on";
        assert_eq!(
            wrap_prose(text, Some(20)),
            "devmem: 220 facts,\n90 queries (90\nevaluated)\n│ keyword ┆ 0.1980 ┆ 0.3778 │\n  indented words\n  that go on"
        );
        assert_eq!(wrap_prose(text, None), text);
    }

    #[test]
    fn a_table_that_fits_is_left_whole() {
        let whole = table(4).to_string();
        // "│ configuration │ nDCG@1 │ nDCG@2 │ nDCG@3 │": 16 + 3 * 10 + 1 = 47 columns.
        assert_eq!(widest_line(&whole), 47);
        assert_eq!(fit_to(&table(4), Some(47)), whole);
        assert_eq!(fit_to(&table(4), None), whole);
    }

    #[test]
    fn escape_codes_take_no_width() {
        // A best cell as a terminal gets it: 24-bit blue, bold, " 0.5091▲ ", reset.
        let cell = "│\u{1b}[38;2;0;114;178m\u{1b}[1m 0.5091▲ \u{1b}[0m│";
        assert_eq!(visible_width(cell), 11);
        // A table styled on a terminal fits where its plain text fits: 47 columns, as
        // `a_table_that_fits_is_left_whole`.
        let mut coloured = new_table();
        coloured.enforce_styling();
        coloured.set_header(vec!["configuration", "nDCG@1", "nDCG@2", "nDCG@3"]);
        for name in ["keyword", "hyde-3b-hyp"] {
            let mut row = vec![Cell::new(name)];
            row.extend((1..4).map(|column| {
                Cell::new(format!("0.{column:04}*"))
                    .add_attribute(comfy_table::Attribute::Bold)
                    .fg(comfy_table::Color::Rgb {
                        r: 0,
                        g: 114,
                        b: 178,
                    })
            }));
            coloured.add_row(row);
        }
        let whole = coloured.to_string();
        assert!(whole.contains("\u{1b}[1m"), "{whole:?}");
        assert_eq!(fit_to(&coloured, Some(47)), whole);
    }

    #[test]
    fn a_wide_table_splits_into_column_groups_that_each_fit() {
        // 1 + 15 + 9 * 10 = 106 columns whole; at 60, at most four value columns per
        // group (16 + 4 * 10 + 1 = 57; five would be 67), so three groups, evenly three
        // columns each.
        let text = fit_to(&table(10), Some(60));
        assert!(
            text.lines().all(|line| line.chars().count() <= 60),
            "{text}"
        );
        let headers: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("configuration"))
            .collect();
        assert_eq!(headers.len(), 3, "{text}");
        assert!(headers[0].contains("nDCG@3") && !headers[0].contains("nDCG@4"));
        assert!(headers[2].contains("nDCG@7") && headers[2].contains("nDCG@9"));
        // Every number appears whole, once per row.
        for column in 1..10 {
            assert_eq!(
                text.matches(&format!("0.{column:04}*")).count(),
                2,
                "{text}"
            );
        }
    }

    #[test]
    fn column_groups_are_as_even_as_they_can_be() {
        // 11 value columns: 16 + 11 x 10 + 1 = 127 whole. At 120, ten fit in one group
        // (117), so two groups are needed; even, they are 6 and 5 columns (77 and 67),
        // not 10 and 1.
        let text = fit_to(&table(12), Some(120));
        let headers: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("configuration"))
            .collect();
        assert_eq!(headers.len(), 2, "{text}");
        assert_eq!(headers[0].matches("nDCG@").count(), 6, "{text}");
        assert_eq!(headers[1].matches("nDCG@").count(), 5, "{text}");
        assert_eq!(visible_width(headers[0]), 77);
    }

    #[test]
    fn a_table_too_narrow_for_two_columns_turns_vertical() {
        let text = fit_to(&table(3), Some(20));
        assert_eq!(
            text,
            "keyword\n  nDCG@1  0.0001*\n  nDCG@2  0.0002*\nhyde-3b-hyp\n  nDCG@1  0.0001*\n  nDCG@2  0.0002*"
        );
    }
}
