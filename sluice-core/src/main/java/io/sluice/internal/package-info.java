/**
 * Implementation shared by the stores: compiled rules, the all-or-nothing evaluation of a rule's limits, the
 * limiter facade. Not API: public only so other Sluice modules can use it; it may change in any release.
 */
package io.sluice.internal;
