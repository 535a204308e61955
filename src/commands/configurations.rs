//! `hyde-eval configurations`: the built-in presets.

use comfy_table::{presets, Table};

use crate::configuration::Preset;

/// `hyde-eval configurations`: the built-in presets.
pub fn list_configurations() -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    table.set_header(vec!["configuration", "what it does", "reproduces"]);
    for preset in Preset::ALL {
        table.add_row(vec![preset.name(), preset.description(), preset.source()]);
    }
    table.to_string()
}
