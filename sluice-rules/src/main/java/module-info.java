/** The rule file format (YAML or JSON): parsing and validation into Sluice's limits and rules. */
module io.sluice.rules {
    requires transitive io.sluice;
    // RuleFile.changeLimit takes a Jackson JsonNode.
    requires transitive com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.dataformat.yaml;

    exports io.sluice.rules;
}
