module example {
    requires io.sluice.rules;
}
