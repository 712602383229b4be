# Power plan checks for Pester 5, the way dbachecks and operational-validation suites are written:
# one It per server, failing with the reason. Run them with
#
#   $c = New-PesterContainer -Path .\PowerPlan.Checks.ps1 -Data @{ ComputerName = 'sql01', 'sql02'; Token = $token }
#   Invoke-Pester -Container $c -Output Detailed
#
# or copy the It blocks into a dbachecks custom check repository (Set-DbcConfig -Name app.checkrepos).
param(
    [string[]]$ComputerName = @('localhost'),
    [string[]]$Kind = @('high-performance', 'ultimate-performance'),
    [int]$Port = 8750,
    [object]$Token,
    [switch]$UseSsl
)

BeforeDiscovery {
    $servers = @($ComputerName | ForEach-Object { @{ Server = $_ } })
}

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot '../PowerPlan/PowerPlan.psd1')
}

Describe 'Power plan' -Tag PowerPlan {
    It '<Server> runs a plan for a database server' -ForEach $servers {
        $r = Test-PowerPlan -ComputerName $Server -Kind $Kind -Port $Port -Token $Token -UseSsl:$UseSsl -Detailed
        $r.Compliant | Should -BeTrue -Because $r.Reason
    }
}
