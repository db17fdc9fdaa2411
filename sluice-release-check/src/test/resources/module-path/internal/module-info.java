module internal {
    requires io.sluice;
}
