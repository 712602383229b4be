@{
    RootModule           = 'PowerPlan.psm1'
    ModuleVersion        = '0.1.0'
    GUID                 = '0e469731-b2c2-4b96-9508-5f61530e44ff'
    Author               = 'powerplan'
    Description          = 'Reads, measures and sets the OS power plan of one or many servers through the powerplan REST API.'
    PowerShellVersion    = '5.1'
    CompatiblePSEditions = @('Desktop', 'Core')
    FunctionsToExport    = @('Get-PowerPlan', 'Get-PowerPlanStatus', 'Set-PowerPlan', 'Test-PowerPlan', 'Invoke-PowerPlanBenchmark', 'Get-PowerPlanRecommendation', 'Install-PowerPlanService', 'Uninstall-PowerPlanService')
    CmdletsToExport      = @()
    DscResourcesToExport = @('PowerPlan')
    VariablesToExport    = @()
    AliasesToExport      = @()
    PrivateData          = @{
        PSData = @{
            Tags = @('PowerPlan', 'powercfg', 'Performance', 'SQLServer', 'Windows', 'Linux')
        }
    }
}
