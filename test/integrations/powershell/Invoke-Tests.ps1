# Runs the PowerPlan module's Pester tests (Pester 5) and writes a summary as JSON to the path
# given, for test/integrations/powershell.test.ts; the exit code is the number of failed tests.
# The service endpoints come from the environment (see PowerPlan.Tests.ps1).
param([Parameter(Mandatory = $true)][string]$SummaryPath)
$ErrorActionPreference = 'Stop'
$pester = Get-Module -ListAvailable Pester | Where-Object { $_.Version.Major -eq 5 } | Sort-Object Version -Descending | Select-Object -First 1
if (-not $pester) {
    # Not Write-Error: with $ErrorActionPreference = 'Stop' it would end the script with exit code 1.
    [Console]::Error.WriteLine('Pester 5 is not installed (see integrations/powershell/README.md, "Tests").')
    exit 100
}
Import-Module $pester.Path -Force
$config = New-PesterConfiguration
$config.Run.Path = @((Join-Path $PSScriptRoot 'PowerPlan.Tests.ps1'), (Join-Path $PSScriptRoot 'PowerPlanService.Tests.ps1'))
$config.Run.PassThru = $true
$config.Output.Verbosity = 'Detailed'
$result = Invoke-Pester -Configuration $config
$summary = [ordered]@{
    pester       = $pester.Version.ToString()
    powershell   = $PSVersionTable.PSVersion.ToString()
    edition      = $PSVersionTable.PSEdition
    result       = $result.Result
    total        = $result.TotalCount
    passed       = $result.PassedCount
    failed       = $result.FailedCount
    skipped      = $result.SkippedCount
    failedTests  = @($result.Failed | ForEach-Object { $_.ExpandedPath })
    failedBlocks = @($result.FailedBlocks | ForEach-Object { $_.ExpandedPath })
}
[System.IO.File]::WriteAllText($SummaryPath, ($summary | ConvertTo-Json -Depth 4), (New-Object System.Text.UTF8Encoding $false))
exit ($result.FailedCount + $result.FailedBlocksCount)
