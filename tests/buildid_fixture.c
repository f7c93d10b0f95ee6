/* SPDX-License-Identifier: MIT */
/*
 * An ELF file for tests/check_symbol: the Makefile links it twice, with a
 * known GNU build-id note and with none, so build-id reading has an
 * expected answer that does not depend on the toolchain's defaults.
 */
int
main(void)
{
	return 0;
}
