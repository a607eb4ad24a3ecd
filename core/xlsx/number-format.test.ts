import { describe, expect, it } from 'vitest'
import { isBuiltinDateFormat, isDateFormatCode } from './number-format.js'

describe('isDateFormatCode', () => {
  it.each([
    'dd/mm/yyyy', 'yyyy-mm-dd hh:mm:ss', '[$-416]dd/mm/yyyy', 'd-mmm-yy', 'h:mm AM/PM', '[h]:mm:ss', 'mm:ss',
    '[Red]dd/mm/yyyy', 'B2dd/mm/yyyy', '"Data: "dd/mm/yyyy', 'yyyy"年"m"月"d"日"'
  ])('sees a date in %j', (code) => {
    expect(isDateFormatCode(code)).toBe(true)
  })

  it.each([
    'General', '0.00', '#,##0.00', '0.00E+00', '"R$" #,##0.00', '[Red]#,##0.00', '0%', '@', '"day"0', '\\d0',
    '#,##0.00;[Red]-#,##0.00', '_-* #,##0.00_-', '[$€-2] #,##0.00', '# ?/?'
  ])('sees no date in %j', (code) => {
    expect(isDateFormatCode(code)).toBe(false)
  })

  it('knows the built-in date ids', () => {
    expect([14, 15, 22, 45, 47].every(isBuiltinDateFormat)).toBe(true)
    expect([0, 1, 2, 4, 10, 11, 49].some(isBuiltinDateFormat)).toBe(false)
  })
})
